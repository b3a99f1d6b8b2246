package authserver_test

import (
	"net/http"
	"strings"
	"testing"

	"heyaira/server/authserver"
	"heyaira/server/internal/servertest"

	"github.com/google/go-cmp/cmp"
)

// TestOA03RegisterRedirectURIs: the scheme check is an allowlist; a bad URI
// writes no client row; the control gets 201 and its URIs echoed.
func TestOA03RegisterRedirectURIs(t *testing.T) {
	t.Parallel()
	e, _ := servertest.NewOAuth(t)
	many := make([]string, 101)
	for i := range many {
		many[i] = "https://c.example/cb"
	}
	tests := []struct {
		name string
		body map[string]any
		code string
	}{
		{"javascript", map[string]any{"redirect_uris": []string{"javascript:alert(1)"}}, "invalid_redirect_uri"},
		{"JaVaScRiPt", map[string]any{"redirect_uris": []string{"JaVaScRiPt:alert(1)"}}, "invalid_redirect_uri"},
		{"leading space", map[string]any{"redirect_uris": []string{" javascript:alert(1)"}}, "invalid_redirect_uri"},
		{"tab inside", map[string]any{"redirect_uris": []string{"java\tscript:alert(1)"}}, "invalid_redirect_uri"},
		{"data", map[string]any{"redirect_uris": []string{"data:text/html,x"}}, "invalid_redirect_uri"},
		{"file", map[string]any{"redirect_uris": []string{"file:///etc/passwd"}}, "invalid_redirect_uri"},
		{"plain http", map[string]any{"redirect_uris": []string{"http://evil.example/cb"}}, "invalid_redirect_uri"},
		{"dotless scheme alone", map[string]any{"redirect_uris": []string{"myapp:/cb"}}, "invalid_redirect_uri"},
		{"relative", map[string]any{"redirect_uris": []string{"/cb"}}, "invalid_redirect_uri"},
		{"fragment", map[string]any{"redirect_uris": []string{"https://c.example/cb#x"}}, "invalid_redirect_uri"},
		{"good with javascript", map[string]any{"redirect_uris": []string{"https://c.example/cb", "javascript:x"}}, "invalid_redirect_uri"},
		{"101 URIs", map[string]any{"redirect_uris": many}, "invalid_redirect_uri"},
		{"64 KiB URI", map[string]any{"redirect_uris": []string{"https://c.example/" + strings.Repeat("a", 64<<10)}}, "invalid_redirect_uri"},
		{"no URIs", map[string]any{"client_name": "x"}, "invalid_redirect_uri"},
		{"URIs not a list", map[string]any{"redirect_uris": "https://c.example/cb"}, "invalid_client_metadata"},
		{"client secret", map[string]any{"redirect_uris": []string{"https://c.example/cb"}, "token_endpoint_auth_method": "client_secret_basic"}, "invalid_client_metadata"},
		{"implicit", map[string]any{"redirect_uris": []string{"https://c.example/cb"}, "grant_types": []string{"implicit"}}, "invalid_client_metadata"},
		{"token response", map[string]any{"redirect_uris": []string{"https://c.example/cb"}, "response_types": []string{"token"}}, "invalid_client_metadata"},
		{"long name", map[string]any{"redirect_uris": []string{"https://c.example/cb"}, "client_name": strings.Repeat("n", 201)}, "invalid_client_metadata"},
	}
	for _, tt := range tests {
		r := e.PostJSON("/oauth/register", tt.body)
		if r.Status != http.StatusBadRequest || r.Body["error"] != tt.code {
			t.Errorf("%s: %d %s, want 400 %s", tt.name, r.Status, r.Raw, tt.code)
		}
	}
	for name, raw := range map[string]string{
		"duplicate key": `{"redirect_uris":["https://c.example/cb"],"redirect_uris":["https://evil.example/cb"]}`,
		"trailing data": `{"redirect_uris":["https://c.example/cb"]} {}`,
		"array":         `[{"redirect_uris":["https://c.example/cb"]}]`,
	} {
		if r := e.PostBody("/oauth/register", "application/json", raw); r.Status != 400 || r.Body["error"] != "invalid_client_metadata" {
			t.Errorf("%s: %d %s", name, r.Status, r.Raw)
		}
	}
	if n := e.CountRows("oauth_clients"); n != 0 {
		t.Fatalf("%d client rows after refusals, want 0", n)
	}

	// Controls. Unknown metadata is ignored (RFC 7591 §2); a case variant of
	// a known key is unknown, not an alias.
	r := e.PostJSON("/oauth/register", map[string]any{
		"redirect_uris": []string{"com.example.app:/cb", "https://c.example/cb"}, "client_name": "Control",
		"Token_Endpoint_Auth_Method": "client_secret_basic", "logo_uri": "https://c.example/l.png",
		// Metadata of newer specifications (OpenID, MCP clients) is not
		// refused either: application_type, software_id and friends (MP-04).
		"application_type": "native", "software_id": "x", "software_version": "1", "tos_uri": "https://c.example/t",
	})
	if r.Status != http.StatusCreated || r.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("control: %d %s", r.Status, r.Raw)
	}
	if diff := cmp.Diff([]any{"com.example.app:/cb", "https://c.example/cb"}, r.Body["redirect_uris"]); diff != "" {
		t.Errorf("echoed redirect_uris (-want +got):\n%s", diff)
	}
	if r.Body["token_endpoint_auth_method"] != "none" || r.Body["client_secret"] != nil ||
		r.Body["client_id_issued_at"] == nil || r.Body["client_name"] != "Control" {
		t.Errorf("control response %s", r.Raw)
	}
	if diff := cmp.Diff([]any{"authorization_code", "refresh_token"}, r.Body["grant_types"]); diff != "" {
		t.Errorf("default grant_types (-want +got):\n%s", diff)
	}

	// Cursor sends cursor://… beside acceptable URIs: the dotless scheme is
	// dropped, the rest registered and echoed (docs/oauth.md).
	r = e.PostJSON("/oauth/register", map[string]any{"redirect_uris": []string{
		"cursor://anysphere.cursor-mcp/oauth/callback", "http://localhost:6274/callback"}})
	if r.Status != http.StatusCreated {
		t.Fatalf("cursor-style registration: %d %s", r.Status, r.Raw)
	}
	if diff := cmp.Diff([]any{"http://localhost:6274/callback"}, r.Body["redirect_uris"]); diff != "" {
		t.Errorf("kept redirect_uris (-want +got):\n%s", diff)
	}
}

// TestOA17RegisterAbuse: per-address rate limit, body bound, bad grant types.
// Row VC-05 (docs/security-tests.md).
func TestOA17RegisterAbuse(t *testing.T) {
	t.Parallel()
	e, _ := servertest.NewOAuth(t)
	big := `{"redirect_uris":["https://c.example/cb"],"x":"` + strings.Repeat("a", 1<<20) + `"}`
	if r := e.PostBody("/oauth/register", "application/json", big); r.Status != http.StatusRequestEntityTooLarge {
		t.Errorf("1 MB body: %d %s", r.Status, r.Raw)
	}
	if r := e.PostBody("/oauth/register", "text/plain", `{"redirect_uris":["https://c.example/cb"]}`); r.Status != 400 {
		t.Errorf("text/plain: %d", r.Status)
	}
	created, limited := 0, 0
	for range 30 {
		r := e.PostJSON("/oauth/register", map[string]any{"redirect_uris": []string{"https://c.example/cb"}})
		switch r.Status {
		case http.StatusCreated:
			created++
		case http.StatusTooManyRequests:
			limited++
			if r.Header.Get("Retry-After") == "" || r.Body["error"] != "rate_limited" {
				t.Errorf("429 without Retry-After or error: %v %s", r.Header, r.Raw)
			}
		default:
			t.Errorf("unexpected %d %s", r.Status, r.Raw)
		}
	}
	if created != authserver.RegisterPerIPBurst || limited == 0 {
		t.Errorf("created %d, limited %d: want %d created", created, limited, authserver.RegisterPerIPBurst)
	}
	if n := e.CountRows("oauth_clients"); n != created {
		t.Errorf("%d client rows, want %d", n, created)
	}
}

// TestOAuthCORS: the JSON endpoints allow any origin without credentials;
// the authorization endpoint never answers CORS (OA-14d).
// Row OA-14 (docs/security-tests.md).
func TestOAuthCORS(t *testing.T) {
	t.Parallel()
	e, _ := servertest.NewOAuth(t)
	for _, path := range []string{"/oauth/register", "/oauth/token", "/oauth/revoke"} {
		req, _ := http.NewRequest("OPTIONS", e.Srv.URL+path, nil)
		req.Header.Set("Origin", "https://inspector.example")
		req.Header.Set("Access-Control-Request-Method", "POST")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.Header.Get("Access-Control-Allow-Origin") != "*" || resp.Header.Get("Access-Control-Allow-Credentials") != "" {
			t.Errorf("%s preflight: %v", path, resp.Header)
		}
	}
	req, _ := http.NewRequest("OPTIONS", e.Srv.URL+"/oauth/authorize", nil)
	req.Header.Set("Origin", "https://evil.example")
	req.Header.Set("Access-Control-Request-Method", "GET")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("authorize preflight allowed an origin: %v", resp.Header)
	}
}
