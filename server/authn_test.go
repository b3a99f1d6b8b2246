package server

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"heyaira/store"
)

// readRecorder is a request body that records whether anyone read it.
type readRecorder struct {
	r    io.Reader
	read bool
}

func (b *readRecorder) Read(p []byte) (int, error) { b.read = true; return b.r.Read(p) }

// Row MP-01: a missing or malformed bearer header is a 401 before the body
// is read; a body the strict parser refuses costs no authentication; and the
// one authentication call carries a read (to authorize and audit) only for a
// git_document_get call whose arguments the strict decoder accepts (no
// lenient key matching); a malformed id is a read refused as source_not_found
// whose row names no target.
func TestMP01BearerBeforeBody(t *testing.T) {
	t.Parallel()
	cfg := Config{PublicURL: "http://127.0.0.1"}
	cfg.setDefaults()
	var calls []string
	authn := func(_ context.Context, _ []byte, pl *readPlan) (store.Auth, error) {
		switch {
		case pl == nil:
			calls = append(calls, "no read")
		case pl.intent.Refusal != "":
			calls = append(calls, pl.intent.Refusal+" "+pl.intent.SourceID)
		default:
			calls = append(calls, pl.intent.SourceID)
		}
		return store.Auth{}, store.ErrNotFound
	}
	docs := &documentTools{}
	tools := newToolTable(slog.New(slog.DiscardHandler), newRateLimiter(1000, 1000), cfg.Metrics, cfg.Now, docs.tools())
	h := handleMCP(slog.New(slog.DiscardHandler), tools, &cfg, authn, newRefusalGate(nothingIssued, cfg.Now))
	const id, other = "7b0c1c3e-9b1e-4a53-9d7e-0d7c7b4c0a11", "8b0c1c3e-9b1e-4a53-9d7e-0d7c7b4c0a12"
	get := func(args string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"git_document_get","arguments":` + args + `}}`
	}
	tests := []struct {
		name, authz, body string
		status            int
		wantRead          bool
		wantCalls         []string
	}{
		{"no header", "", get(`{"source_id":"` + id + `"}`), 401, false, nil},
		{"malformed header", "Bearer a b", get(`{"source_id":"` + id + `"}`), 401, false, nil},
		{"basic scheme", "Basic eDp5", get(`{"source_id":"` + id + `"}`), 401, false, nil},
		{"duplicate source_id", "Bearer t", get(`{"source_id":"` + id + `","source_id":"` + other + `"}`), 400, true, nil},
		{"not JSON", "Bearer t", `{"jsonrpc":`, 400, true, nil},
		{"document read", "Bearer t", get(`{"source_id":"` + id + `"}`), 401, true, []string{id}},
		{"key in another case", "Bearer t", get(`{"Source_ID":"` + id + `"}`), 401, true, []string{"no read"}},
		{"upper-case UUID", "Bearer t", get(`{"source_id":"` + strings.ToUpper(id) + `"}`), 401, true, []string{"source_not_found "}},
		{"no source_id", "Bearer t", get(`{}`), 401, true, []string{"no read"}},
		{"other method", "Bearer t", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, 401, true, []string{"no read"}},
	}
	for _, tt := range tests {
		calls = nil
		body := &readRecorder{r: strings.NewReader(tt.body)}
		r := httptest.NewRequest("POST", "/mcp", body)
		r.Header.Set("Content-Type", "application/json")
		if tt.authz != "" {
			r.Header.Set("Authorization", tt.authz)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != tt.status || body.read != tt.wantRead || strings.Join(calls, ",") != strings.Join(tt.wantCalls, ",") || len(calls) != len(tt.wantCalls) {
			t.Errorf("%s: HTTP %d, body read %v, authentications %q; want %d, %v, %q",
				tt.name, w.Code, body.read, calls, tt.status, tt.wantRead, tt.wantCalls)
		}
	}
}
