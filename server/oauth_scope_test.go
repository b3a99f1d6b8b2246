package server

import (
	"net/http"
	"strings"
	"testing"

	"heyaira/github/githubtest"
)

// TestAZ04DocumentsReadNeedsItsOwnConsent is the rule of docs/design.md §8 end to end
// through the real handler: a grant approved without documents:read yields
// a token that gets 403 insufficient_scope on git_document_get; refresh
// never adds it; a new authorization asking for it shows the consent page
// again, with documents:read on its own line; leaving it unticked leaves the
// grant as it was; ticking it finally allows the read.
// Row BT-42 (docs/security-tests.md).
func TestAZ04DocumentsReadNeedsItsOwnConsent(t *testing.T) {
	t.Parallel()
	e, _ := newOAuthEnv(t)
	tn := e.newTenant("h8v6", "heyaira")
	e.gh.AddFile("h8v6", "heyaira", commitA, "docs/CONTINUITY_PROTOCOL.md", []byte("# Continuity\n"))
	src := e.addSource(tn, "runtime", "docs/CONTINUITY_PROTOCOL.md", commitA, "", 65536)
	c := e.register("http://127.0.0.1/cb")
	read := map[string]any{"name": "git_document_get", "arguments": map[string]any{"source_id": src}}

	// The client asks for everything (no scope: what SDK clients do); the
	// principal approves all but documents:read, which starts unticked.
	b := e.browser(t)
	b.signIn(tn.principal)
	p := b.consent(c.authorizeQuery(""))
	if !strings.Contains(p.body, `class="documents"`) || !strings.Contains(p.body, `value="documents:read">`) {
		t.Fatalf("documents:read is not on its own, unticked line:\n%s", p.body)
	}
	others := []string{"memory:read", "memory:write", "tasks:read", "tasks:write", "workflows:read", "workflows:write"}
	tk := e.exchange(c, codeFrom(t, b.approve(p, tn.project, others...)))
	if tk.status != 200 || strings.Contains(str(tk.body, "scope"), "documents:read") {
		t.Fatalf("token: %d %s", tk.status, tk.raw)
	}
	before := e.gh.Count(githubtest.RouteContents)
	r := e.rpc(str(tk.body, "access_token"), "tools/call", read)
	if r.status != http.StatusForbidden || !strings.Contains(r.header.Get("WWW-Authenticate"), `error="insufficient_scope"`) ||
		!strings.Contains(r.header.Get("WWW-Authenticate"), `scope="documents:read `) {
		t.Fatalf("git_document_get without the scope: %d %q", r.status, r.header.Get("WWW-Authenticate"))
	}
	if e.gh.Count(githubtest.RouteContents) != before {
		t.Error("GitHub was called for a token without documents:read")
	}

	// (a) A refresh keeps the scopes; (b) asking for more is invalid_scope
	// and leaves the refresh token valid.
	ref := e.refresh(c, str(tk.body, "refresh_token"))
	if ref.status != 200 || ref.body["scope"] != tk.body["scope"] {
		t.Fatalf("refresh: %d %s", ref.status, ref.raw)
	}
	if r := e.refresh(c, str(ref.body, "refresh_token"), "scope", "memory:read documents:read"); r.status != 400 || r.body["error"] != "invalid_scope" {
		t.Errorf("refresh adding documents:read: %d %s", r.status, r.raw)
	}
	ref2 := e.refresh(c, str(ref.body, "refresh_token"), "scope", "memory:read")
	if ref2.status != 200 || ref2.body["scope"] != "memory:read" {
		t.Errorf("narrowing refresh after the refused one: %d %s", ref2.status, ref2.raw)
	}
	if r := e.rpc(str(ref2.body, "access_token"), "tools/call", read); r.status != http.StatusForbidden {
		t.Errorf("refreshed token read a document: %d", r.status)
	}
	grantBefore := e.queryString(`SELECT array_to_string(scopes, ' ') FROM oauth_grants`)

	// (c) A new authorization asking for documents:read shows consent
	// again, as a step-up with its own button for it (BT-42); (d) an
	// approval without it changes neither grant nor token.
	p = b.consent(c.authorizeQuery("memory:read documents:read"))
	if !strings.Contains(p.body, `value="approve_documents"`) {
		t.Fatalf("documents:read not offered again")
	}
	tk2 := e.exchange(c, codeFrom(t, b.approve(p, tn.project, "memory:read")))
	if tk2.body["scope"] != "memory:read" {
		t.Errorf("token without the tick: %s", tk2.raw)
	}
	if got := e.queryString(`SELECT array_to_string(scopes, ' ') FROM oauth_grants`); got != grantBefore {
		t.Errorf("grant changed without approval: %q → %q", grantBefore, got)
	}

	// Approving it explicitly is the only way in (on the step-up page, its
	// own button).
	p = b.consent(c.authorizeQuery("memory:read documents:read"))
	f := hidden(p.body)
	f.Set("decision", "approve_documents")
	f.Set("project", tn.project)
	f.Set("scope", "memory:read")
	tk3 := e.exchange(c, codeFrom(t, b.post("/oauth/authorize", f)))
	if tk3.body["scope"] != "memory:read documents:read" {
		t.Fatalf("token with the tick: %s", tk3.raw)
	}
	sc, isErr, raw := e.call(str(tk3.body, "access_token"), "git_document_get", map[string]any{"source_id": src})
	if isErr || sc["content"] != "# Continuity\n" {
		t.Errorf("read with documents:read: %s", raw)
	}
	if n := e.queryString(`SELECT count(*)::text FROM oauth_grants`); n != "1" {
		t.Errorf("%s grants for one (client, principal, project), want 1", n)
	}
}
