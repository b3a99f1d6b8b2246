package mcp_test

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"heyaira/oauth"
	"heyaira/server/internal/servertest"
	"heyaira/server/internal/web"
	"heyaira/server/mcp"
	"heyaira/server/metrics"
	"heyaira/server/tools"
	"heyaira/store"
)

// readRecorder is a request body that records whether anyone read it.
type readRecorder struct {
	r    io.Reader
	read bool
}

func (b *readRecorder) Read(p []byte) (int, error) { b.read = true; return b.r.Read(p) }

// Row MP-01: a missing or malformed bearer header, or a token this server
// never minted, is a 401 before the body is read and before any
// authentication; a body the strict parser refuses costs no
// authentication; every other request is authenticated once, whatever it
// asks for (a document read is authorized by the tool, after the bearer
// check and the tool limiter: read_authorize.go).
// Row JK-01 (docs/security-tests.md).
func TestMP01BearerBeforeBody(t *testing.T) {
	t.Parallel()
	secrets := servertest.HandlerSecrets()
	minted := "Bearer " + secrets.Mint(oauth.PrefixAccess, time.Now().Add(time.Hour))
	var calls []string
	authn := func(context.Context, []byte) (store.Auth, error) {
		calls = append(calls, "token")
		return store.Auth{}, store.ErrNotFound
	}
	groups, _ := tools.New(nil, tools.Config{Now: time.Now}, nil, nil, nil)
	table := mcp.NewToolTable(slog.New(slog.DiscardHandler), web.NewRateLimiter(1000, 1000), metrics.New(), time.Now, groups...)
	h := mcp.HandleMCP(slog.New(slog.DiscardHandler), table, servertest.MCPConfig(secrets), authn)
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
		{"never minted", "Bearer t", get(`{"source_id":"` + id + `"}`), 401, false, nil},
		{"duplicate source_id", minted, get(`{"source_id":"` + id + `","source_id":"` + other + `"}`), 400, true, nil},
		{"not JSON", minted, `{"jsonrpc":`, 400, true, nil},
		{"document read", minted, get(`{"source_id":"` + id + `"}`), 401, true, []string{"token"}},
		{"other method", minted, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, 401, true, []string{"token"}},
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
