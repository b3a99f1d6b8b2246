package authserver_test

import (
	"net/http"
	"strings"
	"testing"

	"heyaira/github/githubtest"
	"heyaira/server/internal/servertest"
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
	e, _ := servertest.NewOAuth(t)
	tn := e.NewTenant("h8v6", "heyaira")
	e.GH.AddFile("h8v6", "heyaira", servertest.CommitA, "docs/CONTINUITY_PROTOCOL.md", []byte("# Continuity\n"))
	src := e.AddSource(tn, "runtime", "docs/CONTINUITY_PROTOCOL.md", servertest.CommitA, "", 65536)
	c := e.Register("http://127.0.0.1/cb")
	read := map[string]any{"name": "git_document_get", "arguments": map[string]any{"source_id": src}}

	// The client asks for everything (no scope: what SDK clients do); the
	// principal approves all but documents:read, which starts unticked.
	b := e.Browser(t)
	b.SignIn(tn.Principal)
	p := b.Consent(c.AuthorizeQuery(""))
	if !strings.Contains(p.Body, `class="documents"`) || !strings.Contains(p.Body, `value="documents:read">`) {
		t.Fatalf("documents:read is not on its own, unticked line:\n%s", p.Body)
	}
	others := []string{"memory:read", "memory:write", "tasks:read", "tasks:write", "workflows:read", "workflows:write"}
	tk := e.Exchange(c, servertest.CodeFrom(t, b.Approve(p, tn.Project, others...)))
	if tk.Status != 200 || strings.Contains(servertest.Str(tk.Body, "scope"), "documents:read") {
		t.Fatalf("token: %d %s", tk.Status, tk.Raw)
	}
	before := e.GH.Count(githubtest.RouteContents)
	r := e.RPC(servertest.Str(tk.Body, "access_token"), "tools/call", read)
	if r.Status != http.StatusForbidden || !strings.Contains(r.Header.Get("WWW-Authenticate"), `error="insufficient_scope"`) ||
		!strings.Contains(r.Header.Get("WWW-Authenticate"), `scope="documents:read `) {
		t.Fatalf("git_document_get without the scope: %d %q", r.Status, r.Header.Get("WWW-Authenticate"))
	}
	if e.GH.Count(githubtest.RouteContents) != before {
		t.Error("GitHub was called for a token without documents:read")
	}

	// (a) A refresh keeps the scopes; (b) asking for more is invalid_scope
	// and leaves the refresh token valid.
	ref := e.Refresh(c, servertest.Str(tk.Body, "refresh_token"))
	if ref.Status != 200 || ref.Body["scope"] != tk.Body["scope"] {
		t.Fatalf("refresh: %d %s", ref.Status, ref.Raw)
	}
	if r := e.Refresh(c, servertest.Str(ref.Body, "refresh_token"), "scope", "memory:read documents:read"); r.Status != 400 || r.Body["error"] != "invalid_scope" {
		t.Errorf("refresh adding documents:read: %d %s", r.Status, r.Raw)
	}
	ref2 := e.Refresh(c, servertest.Str(ref.Body, "refresh_token"), "scope", "memory:read")
	if ref2.Status != 200 || ref2.Body["scope"] != "memory:read" {
		t.Errorf("narrowing refresh after the refused one: %d %s", ref2.Status, ref2.Raw)
	}
	if r := e.RPC(servertest.Str(ref2.Body, "access_token"), "tools/call", read); r.Status != http.StatusForbidden {
		t.Errorf("refreshed token read a document: %d", r.Status)
	}
	grantBefore := e.QueryString(`SELECT array_to_string(scopes, ' ') FROM oauth_grants`)

	// (c) A new authorization asking for documents:read shows consent
	// again, as a step-up with its own button for it (BT-42); (d) an
	// approval without it changes neither grant nor token.
	p = b.Consent(c.AuthorizeQuery("memory:read documents:read"))
	if !strings.Contains(p.Body, `value="approve_documents"`) {
		t.Fatalf("documents:read not offered again")
	}
	tk2 := e.Exchange(c, servertest.CodeFrom(t, b.Approve(p, tn.Project, "memory:read")))
	if tk2.Body["scope"] != "memory:read" {
		t.Errorf("token without the tick: %s", tk2.Raw)
	}
	if got := e.QueryString(`SELECT array_to_string(scopes, ' ') FROM oauth_grants`); got != grantBefore {
		t.Errorf("grant changed without approval: %q → %q", grantBefore, got)
	}

	// Approving it explicitly is the only way in (on the step-up page, its
	// own button).
	p = b.Consent(c.AuthorizeQuery("memory:read documents:read"))
	f := servertest.Hidden(p.Body)
	f.Set("decision", "approve_documents")
	f.Set("project", tn.Project)
	f.Set("scope", "memory:read")
	tk3 := e.Exchange(c, servertest.CodeFrom(t, b.Post("/oauth/authorize", f)))
	if tk3.Body["scope"] != "memory:read documents:read" {
		t.Fatalf("token with the tick: %s", tk3.Raw)
	}
	sc, isErr, raw := e.Call(servertest.Str(tk3.Body, "access_token"), "git_document_get", map[string]any{"source_id": src})
	if isErr || sc["content"] != "# Continuity\n" {
		t.Errorf("read with documents:read: %s", raw)
	}
	if n := e.QueryString(`SELECT count(*)::text FROM oauth_grants`); n != "1" {
		t.Errorf("%s grants for one (client, principal, project), want 1", n)
	}
}
