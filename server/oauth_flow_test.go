package server

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestOAuthFlowEndToEnd walks the whole flow the way an SDK client and a
// browser do: 401 → metadata → DCR → authorize (→ sign-in → back) → consent
// → code → token → /mcp → refresh.
func TestOAuthFlowEndToEnd(t *testing.T) {
	t.Parallel()
	e, _ := newOAuthEnv(t)
	tn := e.newTenant("h8v6", "heyaira")

	// Discovery, as the TypeScript SDK does it.
	r := e.post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`)
	if r.status != http.StatusUnauthorized || !strings.Contains(r.header.Get("WWW-Authenticate"), "resource_metadata=") {
		t.Fatalf("unauthenticated /mcp: %d %q", r.status, r.header.Get("WWW-Authenticate"))
	}
	var prm, asm map[string]any
	resp, err := http.Get(e.srv.URL + "/.well-known/oauth-protected-resource/mcp")
	if err != nil {
		t.Fatal(err)
	}
	decodeBody(t, resp, &prm)
	resp, err = http.Get(e.srv.URL + "/.well-known/oauth-authorization-server")
	if err != nil {
		t.Fatal(err)
	}
	decodeBody(t, resp, &asm)
	if asm["issuer"] != prm["authorization_servers"].([]any)[0] || asm["issuer"] != e.cfg.PublicURL {
		t.Fatalf("issuer %v ≠ authorization_servers[0] %v", asm["issuer"], prm["authorization_servers"])
	}

	c := e.register("http://127.0.0.1/callback")
	c.redirect = "http://127.0.0.1:48213/callback" // a different port: RFC 8252 §7.3
	b := e.browser(t)
	q := c.authorizeQuery("")
	q.Set("resource", e.cfg.PublicURL+"/mcp")
	p := b.get("/oauth/authorize?" + q.Encode())
	if p.status != http.StatusSeeOther || p.header.Get("Location") != "/signin" {
		t.Fatalf("no session: want 303 /signin, got %d %q", p.status, p.header.Get("Location"))
	}
	if p = b.get("/signin"); !strings.Contains(p.body, "come back to the authorization request") {
		t.Errorf("sign-in prompt does not mention the pending request: %s", p.body)
	}
	p = b.signIn(tn.principal)
	if p.status != http.StatusSeeOther || !strings.HasPrefix(p.header.Get("Location"), "/oauth/authorize?") {
		t.Fatalf("sign-in: want 303 back to /oauth/authorize, got %d %q", p.status, p.header.Get("Location"))
	}
	consent := b.get(p.header.Get("Location"))
	for _, want := range []string{"Test Client", "127.0.0.1:48213", "documents:read", "proj"} {
		if !strings.Contains(consent.body, want) {
			t.Errorf("consent page lacks %q", want)
		}
	}
	p = b.approve(consent, tn.project, "memory:read", "tasks:read", "documents:read")
	loc, _ := url.Parse(p.header.Get("Location"))
	if p.status != http.StatusSeeOther || loc.Host != "127.0.0.1:48213" || loc.Path != "/callback" ||
		loc.Query().Get("state") != "st-1" || loc.Query().Get("iss") != e.cfg.PublicURL {
		t.Fatalf("approve: %d %q", p.status, p.header.Get("Location"))
	}
	tok := e.exchange(c, loc.Query().Get("code"))
	if tok.status != http.StatusOK {
		t.Fatalf("exchange: %d %s", tok.status, tok.raw)
	}
	if got := str(tok.body, "scope"); got != "memory:read tasks:read documents:read" {
		t.Errorf("scope = %q", got)
	}
	if e.mcpStatus(str(tok.body, "access_token")) != http.StatusOK {
		t.Fatalf("access token refused at /mcp")
	}
	ref := e.refresh(c, str(tok.body, "refresh_token"))
	if ref.status != http.StatusOK || str(ref.body, "refresh_token") == str(tok.body, "refresh_token") {
		t.Fatalf("refresh: %d %s", ref.status, ref.raw)
	}
	if e.mcpStatus(str(ref.body, "access_token")) != http.StatusOK {
		t.Fatalf("refreshed access token refused at /mcp")
	}
}
