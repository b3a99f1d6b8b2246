package mcp

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"
)

// discardWriter is an http.ResponseWriter that keeps nothing.
type discardWriter struct{ h http.Header }

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w *discardWriter) WriteHeader(int)             {}

// benchmarkEncode is the answer half of a tools/call: the tool's result as
// structuredContent and as a text block (toolResult), then the JSON-RPC
// response (writeRPCResponse), as handleMCP does it.
func benchmarkEncode(b *testing.B, content string) {
	res := &fragment{
		SourceID: "7b0c1c3e-9b1e-4a53-9d7e-0d7c7b4c0a11", GitHubOwner: "h8v6", GitHubRepository: "heyaira",
		Path: "docs/CONTINUITY_PROTOCOL.md", CommitSHA: strings.Repeat("1", 40), Content: content,
		SHA256: strings.Repeat("ab", 32), FragmentSHA256: strings.Repeat("cd", 32), NextCursor: strings.Repeat("A", 300),
	}
	res.Range.EndByte, res.Range.TotalBytes = len(content), 1<<20
	w := &discardWriter{h: http.Header{}}
	b.SetBytes(int64(len(content)))
	b.ReportAllocs()
	for b.Loop() {
		r, err := toolResult(res)
		if err != nil {
			b.Fatal(err)
		}
		writeRPCResponse(w, false, rpcResponse{JSONRPC: "2.0", ID: json.RawMessage("1"), Result: r})
	}
}

// BenchmarkEncodeDocumentResult64KiB answers a git_document_get with a full
// 64 KiB fragment of Markdown (mostly ASCII, a few multi-byte characters).
func BenchmarkEncodeDocumentResult64KiB(b *testing.B) {
	md := strings.Repeat("## Notes\nKeep état, Größe, 中文 and 🚀 intact; follow `next_cursor`.\n", 1000)
	end := 65536
	for !utf8.RuneStart(md[end]) { // a fragment ends on a character boundary
		end--
	}
	benchmarkEncode(b, md[:end])
}

// BenchmarkEncodeDocumentResultSmall answers with a 1 KiB fragment.
func BenchmarkEncodeDocumentResultSmall(b *testing.B) {
	benchmarkEncode(b, strings.Repeat("plain text\n", 93))
}
