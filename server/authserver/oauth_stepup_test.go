package authserver_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"heyaira/server/authserver"
	"heyaira/server/internal/servertest"
	"heyaira/store"
)

// TestBT42StepUpConsentCannotLoop: a client authorized without
// documents:read gets 403 insufficient_scope from git_document_get and
// comes back asking for it (a step-up). The page leads with what is new,
// "<client> asks to also read documents of <project>", and has no plain
// Approve that would hand back a code without documents:read (which sent
// mcp-remote round the consent page again and again). Its answers are the
// button that names document reading (one round: the next token reads
// documents) or keeping it off (access_denied, the grant unchanged).
func TestBT42StepUpConsentCannotLoop(t *testing.T) {
	t.Parallel()
	e, _ := servertest.NewOAuth(t)
	tn := e.NewTenant("o", "r")
	e.GH.AddFile("o", "r", servertest.CommitA, "x.md", []byte("hello"))
	src := e.AddSource(tn, "runtime", "x.md", servertest.CommitA, "", 65536)
	c := e.Register("http://127.0.0.1:48213/cb")
	b := e.Browser(t)
	b.SignIn(tn.Principal)

	// The first round: everything asked, documents left unticked.
	first := b.Consent(c.AuthorizeQuery(""))
	if strings.Contains(first.Body, "asks to also") || !strings.Contains(first.Body, `value="approve"`) {
		t.Fatalf("the first consent page is not the ordinary one: %s", first.Body)
	}
	tok := e.Exchange(c, servertest.CodeFrom(t, b.Approve(first, tn.Project, "memory:read")))
	r := e.RPC(servertest.Str(tok.Body, "access_token"), "tools/call", map[string]any{"name": "git_document_get",
		"arguments": map[string]any{"source_id": src}})
	if r.Status != http.StatusForbidden || !strings.Contains(r.Header.Get("WWW-Authenticate"), `scope="documents:read memory:read"`) {
		t.Fatalf("document read without the scope: %d %q", r.Status, r.Header.Get("WWW-Authenticate"))
	}

	// The client comes back for what the challenge named.
	stepQuery := c.AuthorizeQuery("memory:read documents:read")
	step := b.Consent(stepQuery)
	for _, want := range []string{"Test Client</bdi> asks to also read documents of <bdi>proj</bdi>",
		`value="approve_documents"`, `value="deny_documents"`, "Keep document reading off"} {
		if !strings.Contains(step.Body, want) {
			t.Errorf("step-up page lacks %q", want)
		}
	}
	for _, never := range []string{`value="approve"`, `type="checkbox" name="scope" value="documents:read"`} {
		if strings.Contains(step.Body, never) {
			t.Errorf("step-up page has %q", never)
		}
	}

	// Kept off: access_denied that says so, and nothing granted.
	f := servertest.Hidden(step.Body)
	f.Set("decision", "deny_documents")
	p := b.Post("/oauth/authorize", f)
	loc, _ := url.Parse(p.Header.Get("Location"))
	if p.Status != http.StatusSeeOther || loc.Query().Get("error") != "access_denied" ||
		!strings.Contains(loc.Query().Get("error_description"), "document reading off") {
		t.Errorf("keep documents off: %d %q", p.Status, p.Header.Get("Location"))
	}
	if g := e.QueryString(`SELECT array_to_string(scopes, ' ') FROM oauth_grants WHERE client_id = $1`, e.ClientRow(c)); g != "memory:read" {
		t.Errorf("grant after keeping documents off: %q", g)
	}

	// Allowed: one round, and the new token reads the document.
	step = b.Consent(stepQuery)
	f = servertest.Hidden(step.Body)
	f.Set("decision", "approve_documents")
	f.Set("project", tn.Project)
	f.Set("scope", "memory:read")
	tok = e.Exchange(c, servertest.CodeFrom(t, b.Post("/oauth/authorize", f)))
	if tok.Status != http.StatusOK || servertest.Str(tok.Body, "scope") != "memory:read documents:read" {
		t.Fatalf("token after the step-up: %d %s", tok.Status, tok.Raw)
	}
	if res, isErr, raw := e.Call(servertest.Str(tok.Body, "access_token"), "git_document_get", map[string]any{"source_id": src}); isErr || res == nil {
		t.Errorf("document read after the step-up: %s", raw)
	}
	// The grant now covers the request: the next page is the ordinary one.
	if p := b.Consent(stepQuery); strings.Contains(p.Body, "asks to also") {
		t.Error("a request the grant covers is shown as a step-up")
	}
	// The documents button on a request that never asked for documents is
	// tampering, and grants nothing.
	plain := b.Consent(c.AuthorizeQuery("memory:read"))
	f = servertest.Hidden(plain.Body)
	f.Set("decision", "approve_documents")
	f.Set("project", tn.Project)
	if p := b.Post("/oauth/authorize", f); p.Status != http.StatusBadRequest || p.Header.Get("Location") != "" {
		t.Errorf("approve_documents on a request without documents:read: %d %q", p.Status, p.Header.Get("Location"))
	}
}

// TestStepUpChoice: which requests are step-ups, and which projects the
// step-up page offers.
func TestStepUpChoice(t *testing.T) {
	t.Parallel()
	a, b, c := store.Project{ID: "a", Name: "A"}, store.Project{ID: "b", Name: "B"}, store.Project{ID: "c", Name: "C"}
	all := []store.Project{a, b, c}
	req := []string{"memory:read", "documents:read"}
	// No grant: the ordinary page, every project.
	if s, p := authserver.StepUp(all, map[string][]string{}, req); s != nil || len(p) != 3 {
		t.Errorf("no grant: %+v %v", s, p)
	}
	// The grant covers the request: the ordinary page.
	if s, _ := authserver.StepUp(all, map[string][]string{"a": {"documents:read", "memory:read"}}, req); s != nil {
		t.Errorf("covered: %+v", s)
	}
	// One grant lacks documents:read: that project, named.
	s, p := authserver.StepUp(all, map[string][]string{"a": {"memory:read"}}, req)
	if s == nil || !s.Documents || s.Project != "A" || len(s.Others) != 0 || len(p) != 1 || p[0].ID != "a" {
		t.Errorf("one lacking: %+v %v", s, p)
	}
	// Two lack something: both offered, none named, every new scope listed.
	s, p = authserver.StepUp(all, map[string][]string{"a": {"memory:read"}, "b": {"documents:read"}}, req)
	if s == nil || !s.Documents || s.Project != "" || len(s.Others) != 1 || len(p) != 2 {
		t.Errorf("two lacking: %+v %v", s, p)
	}
}
