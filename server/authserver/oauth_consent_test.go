package authserver_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"heyaira/server/internal/servertest"
)

// TestOA14ConsentCSRFAndFraming: the approve POST needs this session's CSRF
// token for this request; pages forbid framing; a new client always gets a
// prompt; client_name is escaped.
func TestOA14ConsentCSRFAndFraming(t *testing.T) {
	t.Parallel()
	e, _ := servertest.NewOAuth(t)
	tn := e.NewTenant("o", "r")
	r := e.PostJSON("/oauth/register", map[string]any{"redirect_uris": []string{"https://client.example/cb"},
		"client_name": "<script>alert(1)</script>\"><img src=x onerror=alert(2)>\u202Egnp.exe"})
	c := servertest.Client{ID: servertest.Str(r.Body, "client_id"), Redirect: "https://client.example/cb", Verifier: strings.Repeat("v", 43)}
	alice, mallory := e.Browser(t), e.Browser(t)
	alice.SignIn(tn.Principal)
	mallory.SignIn(tn.Principal)
	p := alice.Consent(c.AuthorizeQuery(""))
	for _, bad := range []string{"<script>", "<img", "\u202E"} {
		if strings.Contains(p.Body, bad) {
			t.Errorf("consent page contains %q", bad)
		}
	}
	if !strings.Contains(p.Body, "&lt;script&gt;") || !strings.Contains(p.Body, "client.example") {
		t.Errorf("consent page does not name the client and redirect host")
	}
	// (b) headers on every page of the flow.
	for name, pg := range map[string]servertest.Page{
		"consent": p,
		"error":   alice.Get("/oauth/authorize?client_id=nope"),
		"signin":  e.Browser(t).Get("/signin?token=" + e.SigninLink(tn.Principal)),
		"prompt":  e.Browser(t).Get("/signin"),
	} {
		h := pg.Header
		if !strings.Contains(h.Get("Content-Security-Policy"), "frame-ancestors 'none'") || h.Get("X-Frame-Options") != "DENY" ||
			h.Get("Referrer-Policy") != "no-referrer" || h.Get("Cache-Control") != "no-store" {
			t.Errorf("%s page headers: %v", name, h)
		}
	}
	approveWith := func(b *servertest.Browser, f url.Values) servertest.Page {
		f.Set("decision", "approve")
		f.Set("project", tn.Project)
		f.Set("scope", "memory:read")
		return b.Post("/oauth/authorize", f)
	}
	f := servertest.Hidden(p.Body)
	// (a) no token; a token from another session; the right token in another session.
	noCSRF := url.Values{"request": {f.Get("request")}}
	if r := approveWith(alice, noCSRF); r.Status != http.StatusForbidden {
		t.Errorf("no CSRF: %d", r.Status)
	}
	mp := mallory.Consent(c.AuthorizeQuery(""))
	cross := url.Values{"request": {f.Get("request")}, "csrf": {servertest.Hidden(mp.Body).Get("csrf")}}
	if r := approveWith(alice, cross); r.Status != http.StatusForbidden {
		t.Errorf("CSRF token of another request: %d", r.Status)
	}
	if r := approveWith(mallory, url.Values{"request": {f.Get("request")}, "csrf": {f.Get("csrf")}}); r.Status != http.StatusForbidden {
		t.Errorf("alice's form posted from mallory's session: %d", r.Status)
	}
	if r := approveWith(e.Browser(t), url.Values{"request": {f.Get("request")}, "csrf": {f.Get("csrf")}}); r.Status != http.StatusForbidden {
		t.Errorf("form posted without a session: %d", r.Status)
	}
	if n := e.CountRows("oauth_codes"); n != 0 {
		t.Fatalf("%d codes after refused posts", n)
	}
	// The genuine post works once; its replay is refused.
	if r := approveWith(alice, servertest.Hidden(p.Body)); r.Status != http.StatusSeeOther {
		t.Fatalf("genuine approve: %d %s", r.Status, r.Body)
	}
	if r := approveWith(alice, servertest.Hidden(p.Body)); r.Status != http.StatusBadRequest || r.Header.Get("Location") != "" {
		t.Errorf("replayed approve: %d %q", r.Status, r.Header.Get("Location"))
	}
	if n := e.CountRows("oauth_codes"); n != 1 {
		t.Errorf("%d codes, want 1", n)
	}
	// (c) approving client X never lets a new client Y skip the prompt.
	y := e.Register("https://y.example/cb")
	alice.Consent(y.AuthorizeQuery(""))
	// Nor does it let X skip it: consent is shown on every authorization.
	alice.Consent(c.AuthorizeQuery(""))
}

// TestAZ13ConsentTampering: a project the principal is not a member of, an
// unrequested scope or an extra principal_id are refused with no grant and
// no code, and audited.
func TestAZ13ConsentTampering(t *testing.T) {
	t.Parallel()
	e, _ := servertest.NewOAuth(t)
	tn := e.NewTenant("o", "r")
	other := e.NewTenant("o2", "r2")
	c := e.Register("https://client.example/cb")
	b := e.Browser(t)
	b.SignIn(tn.Principal)
	p := b.Consent(c.AuthorizeQuery("memory:read tasks:read"))
	post := func(mut func(url.Values)) servertest.Page {
		f := servertest.Hidden(p.Body)
		f.Set("decision", "approve")
		f.Set("project", tn.Project)
		f.Set("scope", "memory:read")
		mut(f)
		return b.Post("/oauth/authorize", f)
	}
	for name, tc := range map[string]struct {
		mut    func(url.Values)
		status int
	}{
		"foreign project":      {func(f url.Values) { f.Set("project", other.Project) }, http.StatusForbidden},
		"unrequested scope":    {func(f url.Values) { f.Add("scope", "workflows:write") }, http.StatusBadRequest},
		"unknown scope":        {func(f url.Values) { f.Add("scope", "admin:all") }, http.StatusBadRequest},
		"repeated scope":       {func(f url.Values) { f.Add("scope", "memory:read") }, http.StatusBadRequest},
		"principal_id":         {func(f url.Values) { f.Set("principal_id", other.Principal) }, http.StatusBadRequest},
		"client_id":            {func(f url.Values) { f.Set("client_id", c.ID) }, http.StatusBadRequest},
		"no scope":             {func(f url.Values) { f.Del("scope") }, http.StatusBadRequest},
		"no decision":          {func(f url.Values) { f.Del("decision") }, http.StatusBadRequest},
		"project not a uuid":   {func(f url.Values) { f.Set("project", "'; DROP TABLE x; --") }, http.StatusForbidden},
		"other's project only": {func(f url.Values) { f.Set("project", other.Project); f.Set("scope", "tasks:read") }, http.StatusForbidden},
	} {
		if r := post(tc.mut); r.Status != tc.status || r.Header.Get("Location") != "" {
			t.Errorf("%s: %d %q, want %d", name, r.Status, r.Header.Get("Location"), tc.status)
		}
	}
	if n := e.CountRows("oauth_grants") + e.CountRows("oauth_codes"); n != 0 {
		t.Fatalf("%d grant/code rows after tampering", n)
	}
	audited := e.QueryString(`SELECT count(*)::text FROM audit_events WHERE action = 'oauth_consent.refused' AND actor = $1`,
		"principal:"+tn.Principal)
	if audited != "8" {
		t.Errorf("%s refused-consent audit rows, want 8", audited)
	}
	// The request is still pending: the honest answer works.
	if code := servertest.CodeFrom(t, post(func(url.Values) {})); code == "" {
		t.Fatal("no code")
	}
	if got := e.QueryString(`SELECT project_id::text FROM oauth_grants`); got != tn.Project {
		t.Errorf("grant project %s, want %s", got, tn.Project)
	}
}
