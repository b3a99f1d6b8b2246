package mcp

import (
	"encoding/json"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestToolResultEnvelope checks a tool result as it is sent: its text block
// holds the JSON of its structuredContent, characters that need escaping
// included, and the response carries its length (no chunked framing).
func TestToolResultEnvelope(t *testing.T) {
	t.Parallel()
	res := &fragment{SourceID: "s", Path: "p", Content: "Quote \" backslash \\ newline \n tab \t <html> & \u2028 é 😀 \x01",
		NextCursor: "c"}
	res.Range.EndByte, res.Range.TotalBytes = 3, 9
	r, err := toolResult(res)
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	writeRPCResponse(w, false, rpcResponse{JSONRPC: "2.0", ID: json.RawMessage(`"id-7"`), Result: r})
	var got struct {
		Result struct {
			Content    []textContent `json:"content"`
			Structured fragment      `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
		t.Fatalf("invalid JSON: %v\n%s", err, w.Body.Bytes())
	}
	var text fragment
	json.Unmarshal([]byte(got.Result.Content[0].Text), &text)
	if diff := cmp.Diff(*res, got.Result.Structured); diff != "" {
		t.Errorf("structuredContent (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(*res, text); diff != "" {
		t.Errorf("text block (-want +got):\n%s", diff)
	}
	if cl := w.Header().Get("Content-Length"); cl != strconv.Itoa(w.Body.Len()) {
		t.Errorf("Content-Length %q for %d bytes", cl, w.Body.Len())
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
	b, _ := json.Marshal(got)
	if string(b) != want {
		t.Errorf("toolResult = %q, want %q", b, want)
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
