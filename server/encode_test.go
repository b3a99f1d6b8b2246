package server

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
	res := &documentResult{SourceID: "s", Path: "p", Content: "Quote \" backslash \\ newline \n tab \t <html> & \u2028 é 😀 \x01",
		Range: documentRange{EndByte: 3, TotalBytes: 9}, NextCursor: "c"}
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
