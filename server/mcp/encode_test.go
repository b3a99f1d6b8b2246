package mcp

import (
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestEncodedResultMatchesGenericEncoding checks that the pre-encoded tool
// result written by writeRPCResponse says exactly what encoding the
// callToolResult value with encoding/json says, for content full of
// characters that need escaping.
func TestEncodedResultMatchesGenericEncoding(t *testing.T) {
	t.Parallel()
	res := &fragment{SourceID: "s", Path: "p", Content: "Quote \" backslash \\ newline \n tab \t <html> & \u2028 é 😀 \x01",
		NextCursor: "c"}
	res.Range.EndByte, res.Range.TotalBytes = 3, 9
	pre, err := toolResult(res)
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	writeRPCResponse(w, false, rpcResponse{JSONRPC: "2.0", ID: json.RawMessage(`"id-7"`), Result: pre})
	var got map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
		t.Fatalf("fast path wrote invalid JSON: %v\n%s", err, w.Body.Bytes())
	}
	sc, _ := json.Marshal(res)
	generic, _ := json.Marshal(rpcResponse{JSONRPC: "2.0", ID: json.RawMessage(`"id-7"`), Result: &callToolResult{
		Content: []textContent{{Type: "text", Text: string(sc)}}, StructuredContent: json.RawMessage(sc)}})
	var want map[string]any
	json.Unmarshal(generic, &want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("fast path differs from encoding/json (-want +got):\n%s", diff)
	}
	if ct := w.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
}

// TestToolResultInvalidUTF8: a value whose encoding holds invalid UTF-8
// (only a RawMessage or Marshaler could) gets its text block from
// json.Marshal, which replaces the bad bytes.
func TestToolResultInvalidUTF8(t *testing.T) {
	t.Parallel()
	v := json.RawMessage("\"a\xffb\"")
	got, err := toolResult(v)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"content":[{"type":"text","text":"\"a\ufffdb\""}],"structuredContent":"a` + "\xff" + `b"}`
	if string(got) != want {
		t.Errorf("toolResult = %q, want %q", got, want)
	}
}

// fragment has the shape of git_document_get's result, for the encoding
// tests and benchmarks.
type fragment struct {
	SourceID         string `json:"source_id"`
	GitHubOwner      string `json:"github_owner"`
	GitHubRepository string `json:"github_repository"`
	Path             string `json:"path"`
	CommitSHA        string `json:"commit_sha"`
	Content          string `json:"content"`
	Range            struct {
		StartByte  int `json:"start_byte"`
		EndByte    int `json:"end_byte"`
		TotalBytes int `json:"total_bytes"`
	} `json:"range"`
	SHA256         string `json:"sha256"`
	FragmentSHA256 string `json:"fragment_sha256"`
	NextCursor     string `json:"next_cursor,omitempty"`
}
