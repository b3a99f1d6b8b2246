package server

import (
	"bytes"
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestPeekLeavesBodyIntact pins that the peek before authentication is only
// a hint: whatever the body, handleMCP reads exactly the same bytes (and the
// same error) afterwards, and only a small git_document_get call with a
// canonical UUID yields a source to prefetch.
func TestPeekLeavesBodyIntact(t *testing.T) {
	t.Parallel()
	const id = "7b0c1c3e-9b1e-4a53-9d7e-0d7c7b4c0a11"
	call := func(name, args string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + name + `","arguments":` + args + `}}`
	}
	tests := []struct {
		name, body, want string
	}{
		{"document read", call("git_document_get", `{"source_id":"`+id+`"}`), id},
		{"continuation", call("git_document_get", `{"source_id":"`+id+`","cursor":"`+strings.Repeat("A", 300)+`"}`), id},
		{"other tool", call("memory_get", `{"source_id":"`+id+`"}`), ""},
		{"not a UUID", call("git_document_get", `{"source_id":"not-a-uuid"}`), ""},
		{"upper-case UUID", call("git_document_get", `{"source_id":"`+strings.ToUpper(id)+`"}`), ""},
		{"not JSON", `{"jsonrpc":`, ""},
		{"too large to peek", call("git_document_get", `{"source_id":"`+id+`","pad":"`+strings.Repeat("x", maxPeek)+`"}`), ""},
		{"empty", ``, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := httptest.NewRequest("POST", "/mcp", strings.NewReader(tt.body))
			if got := peekDocumentSource(r); got != tt.want {
				t.Errorf("hint = %q, want %q", got, tt.want)
			}
			b, err := io.ReadAll(r.Body)
			if err != nil || string(b) != tt.body {
				t.Errorf("body after peek = %q, %v; want the original", b, err)
			}
		})
	}

	// A body that fails while being read fails the same way afterwards.
	boom := errors.New("connection reset")
	r := httptest.NewRequest("POST", "/mcp", io.MultiReader(strings.NewReader(`{"jsonrpc"`), errAfter{boom}))
	r.ContentLength = 100
	if got := peekDocumentSource(r); got != "" {
		t.Errorf("hint from a failed body = %q", got)
	}
	b, err := io.ReadAll(r.Body)
	if !errors.Is(err, boom) || !bytes.Equal(b, []byte(`{"jsonrpc"`)) {
		t.Errorf("failed body after peek = %q, %v; want the partial bytes and the error", b, err)
	}
}

type errAfter struct{ err error }

func (e errAfter) Read([]byte) (int, error) { return 0, e.err }
