package authserver_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"heyaira/server/internal/servertest"
)

// TestOAuthFlowEndToEnd walks the whole flow the way an SDK client and a
// browser do: 401 → metadata → DCR → authorize (→ sign-in → back) → consent
// → code → token → /mcp → refresh.
func TestOAuthFlowEndToEnd(t *testing.T) {
	t.Parallel()
	e, _ := servertest.NewOAuth(t)
	tn := e.NewTenant("h8v6", "heyaira")

	// Discovery, as the TypeScript SDK does it.
	r := e.Post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`)
	if r.Status != http.StatusUnauthorized || !strings.Contains(r.Header.Get("WWW-Authenticate"), "resource_metadata=") {
		t.Fatalf("unauthenticated /mcp: %d %q", r.Status, r.Header.Get("WWW-Authenticate"))
	}
	var prm, asm map[string]any
	resp, err := http.Get(e.Srv.URL + "/.well-known/oauth-protected-resource/mcp")
	if err != nil {
		t.Fatal(err)
	}
	servertest.DecodeBody(t, resp, &prm)
	resp, err = http.Get(e.Srv.URL + "/.well-known/oauth-authorization-server")
	if err != nil {
		t.Fatal(err)
	}
	servertest.DecodeBody(t, resp, &asm)
	if asm["issuer"] != prm["authorization_servers"].([]any)[0] || asm["issuer"] != e.Cfg.PublicURL {
		t.Fatalf("issuer %v ≠ authorization_servers[0] %v", asm["issuer"], prm["authorization_servers"])
	}

	c := e.Register("http://127.0.0.1/callback")
	c.Redirect = "http://127.0.0.1:48213/callback" // a different port: RFC 8252 §7.3
	b := e.Browser(t)
	q := c.AuthorizeQuery("")
	q.Set("resource", e.Cfg.PublicURL+"/mcp")
	p := b.Get("/oauth/authorize?" + q.Encode())
	if p.Status != http.StatusSeeOther || p.Header.Get("Location") != "/signin" {
		t.Fatalf("no session: want 303 /signin, got %d %q", p.Status, p.Header.Get("Location"))
	}
	if p = b.Get("/signin"); !strings.Contains(p.Body, "come back to the authorization request") {
		t.Errorf("sign-in prompt does not mention the pending request: %s", p.Body)
	}
	p = b.SignIn(tn.Principal)
	if p.Status != http.StatusSeeOther || !strings.HasPrefix(p.Header.Get("Location"), "/oauth/authorize?") {
		t.Fatalf("sign-in: want 303 back to /oauth/authorize, got %d %q", p.Status, p.Header.Get("Location"))
	}
	consent := b.Get(p.Header.Get("Location"))
	for _, want := range []string{"Test Client", "127.0.0.1:48213", "documents:read", "proj"} {
		if !strings.Contains(consent.Body, want) {
			t.Errorf("consent page lacks %q", want)
		}
	}
	p = b.Approve(consent, tn.Project, "memory:read", "tasks:read", "documents:read")
	loc, _ := url.Parse(p.Header.Get("Location"))
	if p.Status != http.StatusSeeOther || loc.Host != "127.0.0.1:48213" || loc.Path != "/callback" ||
		loc.Query().Get("state") != "st-1" || loc.Query().Get("iss") != e.Cfg.PublicURL {
		t.Fatalf("approve: %d %q", p.Status, p.Header.Get("Location"))
	}
	tok := e.Exchange(c, loc.Query().Get("code"))
	if tok.Status != http.StatusOK {
		t.Fatalf("exchange: %d %s", tok.Status, tok.Raw)
	}
	if got := servertest.Str(tok.Body, "scope"); got != "memory:read tasks:read documents:read" {
		t.Errorf("scope = %q", got)
	}
	if e.MCPStatus(servertest.Str(tok.Body, "access_token")) != http.StatusOK {
		t.Fatalf("access token refused at /mcp")
	}
	ref := e.Refresh(c, servertest.Str(tok.Body, "refresh_token"))
	if ref.Status != http.StatusOK || servertest.Str(ref.Body, "refresh_token") == servertest.Str(tok.Body, "refresh_token") {
		t.Fatalf("refresh: %d %s", ref.Status, ref.Raw)
	}
	if e.MCPStatus(servertest.Str(ref.Body, "access_token")) != http.StatusOK {
		t.Fatalf("refreshed access token refused at /mcp")
	}
}
