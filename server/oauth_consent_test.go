package server

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestOA14ConsentCSRFAndFraming: the approve POST needs this session's CSRF
// token for this request; pages forbid framing; a new client always gets a
// prompt; client_name is escaped.
func TestOA14ConsentCSRFAndFraming(t *testing.T) {
	t.Parallel()
	e, _ := newOAuthEnv(t)
	tn := e.newTenant("o", "r")
	r := e.postJSON("/oauth/register", map[string]any{"redirect_uris": []string{"https://client.example/cb"},
		"client_name": "<script>alert(1)</script>\"><img src=x onerror=alert(2)>\u202Egnp.exe"})
	c := client{id: str(r.body, "client_id"), redirect: "https://client.example/cb", verifier: strings.Repeat("v", 43)}
	alice, mallory := e.browser(t), e.browser(t)
	alice.signIn(tn.principal)
	mallory.signIn(tn.principal)
	p := alice.consent(c.authorizeQuery(""))
	for _, bad := range []string{"<script>", "<img", "\u202E"} {
		if strings.Contains(p.body, bad) {
			t.Errorf("consent page contains %q", bad)
		}
	}
	if !strings.Contains(p.body, "&lt;script&gt;") || !strings.Contains(p.body, "client.example") {
		t.Errorf("consent page does not name the client and redirect host")
	}
	// (b) headers on every page of the flow.
	for name, pg := range map[string]page{
		"consent": p,
		"error":   alice.get("/oauth/authorize?client_id=nope"),
		"signin":  e.browser(t).get("/signin?token=" + e.signinLink(tn.principal)),
		"prompt":  e.browser(t).get("/signin"),
	} {
		h := pg.header
		if !strings.Contains(h.Get("Content-Security-Policy"), "frame-ancestors 'none'") || h.Get("X-Frame-Options") != "DENY" ||
			h.Get("Referrer-Policy") != "no-referrer" || h.Get("Cache-Control") != "no-store" {
			t.Errorf("%s page headers: %v", name, h)
		}
	}
	approveWith := func(b *browser, f url.Values) page {
		f.Set("decision", "approve")
		f.Set("project", tn.project)
		f.Set("scope", "memory:read")
		return b.post("/oauth/authorize", f)
	}
	f := hidden(p.body)
	// (a) no token; a token from another session; the right token in another session.
	noCSRF := url.Values{"request": {f.Get("request")}}
	if r := approveWith(alice, noCSRF); r.status != http.StatusForbidden {
		t.Errorf("no CSRF: %d", r.status)
	}
	mp := mallory.consent(c.authorizeQuery(""))
	cross := url.Values{"request": {f.Get("request")}, "csrf": {hidden(mp.body).Get("csrf")}}
	if r := approveWith(alice, cross); r.status != http.StatusForbidden {
		t.Errorf("CSRF token of another request: %d", r.status)
	}
	if r := approveWith(mallory, url.Values{"request": {f.Get("request")}, "csrf": {f.Get("csrf")}}); r.status != http.StatusForbidden {
		t.Errorf("alice's form posted from mallory's session: %d", r.status)
	}
	if r := approveWith(e.browser(t), url.Values{"request": {f.Get("request")}, "csrf": {f.Get("csrf")}}); r.status != http.StatusForbidden {
		t.Errorf("form posted without a session: %d", r.status)
	}
	if n := e.countRows("oauth_codes"); n != 0 {
		t.Fatalf("%d codes after refused posts", n)
	}
	// The genuine post works once; its replay is refused.
	if r := approveWith(alice, hidden(p.body)); r.status != http.StatusSeeOther {
		t.Fatalf("genuine approve: %d %s", r.status, r.body)
	}
	if r := approveWith(alice, hidden(p.body)); r.status != http.StatusBadRequest || r.header.Get("Location") != "" {
		t.Errorf("replayed approve: %d %q", r.status, r.header.Get("Location"))
	}
	if n := e.countRows("oauth_codes"); n != 1 {
		t.Errorf("%d codes, want 1", n)
	}
	// (c) approving client X never lets a new client Y skip the prompt.
	y := e.register("https://y.example/cb")
	alice.consent(y.authorizeQuery(""))
	// Nor does it let X skip it: consent is shown on every authorization.
	alice.consent(c.authorizeQuery(""))
}

// TestAZ13ConsentTampering: a project the principal is not a member of, an
// unrequested scope or an extra principal_id are refused with no grant and
// no code, and audited.
func TestAZ13ConsentTampering(t *testing.T) {
	t.Parallel()
	e, _ := newOAuthEnv(t)
	tn := e.newTenant("o", "r")
	other := e.newTenant("o2", "r2")
	c := e.register("https://client.example/cb")
	b := e.browser(t)
	b.signIn(tn.principal)
	p := b.consent(c.authorizeQuery("memory:read tasks:read"))
	post := func(mut func(url.Values)) page {
		f := hidden(p.body)
		f.Set("decision", "approve")
		f.Set("project", tn.project)
		f.Set("scope", "memory:read")
		mut(f)
		return b.post("/oauth/authorize", f)
	}
	for name, tc := range map[string]struct {
		mut    func(url.Values)
		status int
	}{
		"foreign project":      {func(f url.Values) { f.Set("project", other.project) }, http.StatusForbidden},
		"unrequested scope":    {func(f url.Values) { f.Add("scope", "workflows:write") }, http.StatusBadRequest},
		"unknown scope":        {func(f url.Values) { f.Add("scope", "admin:all") }, http.StatusBadRequest},
		"repeated scope":       {func(f url.Values) { f.Add("scope", "memory:read") }, http.StatusBadRequest},
		"principal_id":         {func(f url.Values) { f.Set("principal_id", other.principal) }, http.StatusBadRequest},
		"client_id":            {func(f url.Values) { f.Set("client_id", c.id) }, http.StatusBadRequest},
		"no scope":             {func(f url.Values) { f.Del("scope") }, http.StatusBadRequest},
		"no decision":          {func(f url.Values) { f.Del("decision") }, http.StatusBadRequest},
		"project not a uuid":   {func(f url.Values) { f.Set("project", "'; DROP TABLE x; --") }, http.StatusForbidden},
		"other's project only": {func(f url.Values) { f.Set("project", other.project); f.Set("scope", "tasks:read") }, http.StatusForbidden},
	} {
		if r := post(tc.mut); r.status != tc.status || r.header.Get("Location") != "" {
			t.Errorf("%s: %d %q, want %d", name, r.status, r.header.Get("Location"), tc.status)
		}
	}
	if n := e.countRows("oauth_grants") + e.countRows("oauth_codes"); n != 0 {
		t.Fatalf("%d grant/code rows after tampering", n)
	}
	audited := e.queryString(`SELECT count(*)::text FROM audit_events WHERE action = 'oauth_consent.refused' AND actor = $1`,
		"principal:"+tn.principal)
	if audited != "8" {
		t.Errorf("%s refused-consent audit rows, want 8", audited)
	}
	// The request is still pending: the honest answer works.
	if code := codeFrom(t, post(func(url.Values) {})); code == "" {
		t.Fatal("no code")
	}
	if got := e.queryString(`SELECT project_id::text FROM oauth_grants`); got != tn.project {
		t.Errorf("grant project %s, want %s", got, tn.project)
	}
}
