package server_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"unicode/utf8"

	"heyaira/server"
	"heyaira/server/internal/servertest"
)

// The read path end to end (MCP request → authorization → source lookup →
// one GitHub request → verification → fragment → audit → JSON response), beside
// the floor: a bare GET of the same contents JSON from the same fake. Compare
// the two in one run (`go test -bench 'DocumentGet|BareContents' -benchmem`):
// the machines are shared, so ratios mean more than absolute times.

func benchEnv(b *testing.B, size int) (*servertest.Env, string, string) {
	e := servertest.New(b, func(c *server.Config) { c.ToolRate = 1e9; c.ToolBurst = 1 << 30; c.GitHubHourlyBudget = 1 << 30 })
	tn := e.NewTenant("bench", "docs")
	doc := servertest.MixedText(size)[:size]
	for !utf8.Valid(doc) { // not a rune cut in two at the end
		doc = doc[:len(doc)-1]
	}
	e.GH.AddFile("bench", "docs", servertest.CommitA, "big.md", doc)
	src := e.AddSource(tn, "runtime", "big.md", servertest.CommitA, "", 65536)
	return e, src, e.Token(tn, "documents:read")
}

func BenchmarkDocumentGet1MiB(b *testing.B) { benchmarkDocumentGet(b, 1<<20, 65536) }

// BenchmarkDocumentGetSmall is the read most agents make: a 2.5 KB document
// in one fragment. Its allocations are what the garbage collector pays for.
func BenchmarkDocumentGetSmall(b *testing.B) { benchmarkDocumentGet(b, 2500, 2400) }

func benchmarkDocumentGet(b *testing.B, size int, want int64) {
	e, src, tok := benchEnv(b, size)
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
		"params": map[string]any{"name": "git_document_get", "arguments": map[string]any{"source_id": src}}})
	client := &http.Client{}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		req, _ := http.NewRequest("POST", e.Srv.URL+"/mcp", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || n < want {
			b.Fatalf("HTTP %d, %d bytes", resp.StatusCode, n)
		}
	}
}

func BenchmarkBareContentsGET1MiB(b *testing.B) {
	e, src, tok := benchEnv(b, 1<<20)
	e.Call(tok, "git_document_get", map[string]any{"source_id": src}) // mints the installation token
	gt := e.GH.IssuedTokens()[0]
	url := e.GH.URL() + "/repos/bench/docs/contents/big.md?ref=" + servertest.CommitA
	client := e.GH.HTTPClient()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		req, _ := http.NewRequest("GET", url, nil)
		req.Header.Set("Accept", "application/vnd.github.object+json")
		req.Header.Set("X-GitHub-Api-Version", "2022-11-28")
		req.Header.Set("User-Agent", "bench")
		req.Header.Set("Authorization", "Bearer "+gt)
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || n < 1<<20 {
			b.Fatalf("HTTP %d, %d bytes", resp.StatusCode, n)
		}
	}
}
