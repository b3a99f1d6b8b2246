package server

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"heyaira/oauth"
	"heyaira/server/authserver"
)

// TestOA18SigninLink: GET never redeems; POST redeems once; expired links
// fail; a POST without the CSRF token of this browser is refused (login
// CSRF); a session planted before sign-in is replaced.
// Row BT-41 (docs/security-tests.md).
func TestOA18SigninLink(t *testing.T) {
	t.Parallel()
	e, _ := newOAuthEnv(t)
	tn := e.newTenant("o", "r")
	used := func(link string) string {
		return e.queryString(`SELECT (used_at IS NOT NULL)::text FROM signin_links WHERE token_hash = $1`, oauth.Hash(link))
	}
	sessions := func() int { return e.countRows("browser_sessions") }

	// (a) Link scanners fetch the link: nothing happens.
	link := e.signinLink(tn.principal)
	b := e.browser(t)
	for range 3 {
		if p := b.get("/signin?token=" + link); p.status != 200 || !strings.Contains(p.body, `<button type="submit">Sign in</button>`) {
			t.Fatalf("GET: %d %s", p.status, p.body)
		}
	}
	if used(link) != "false" || sessions() != 0 {
		t.Fatal("GET redeemed the link")
	}
	form := hidden(b.get("/signin?token=" + link).body)
	p := b.post("/signin", form)
	if p.status != http.StatusSeeOther || p.header.Get("Location") != "/signin" || used(link) != "true" || sessions() != 1 {
		t.Fatalf("POST: %d %q", p.status, p.header.Get("Location"))
	}
	cookies := p.header.Values("Set-Cookie")
	var session string
	for _, c := range cookies {
		if strings.HasPrefix(c, "heyaira_session=") {
			session = c
		}
	}
	if !strings.Contains(session, "HttpOnly") || !strings.Contains(session, "SameSite=Lax") ||
		!strings.Contains(session, "Path=/") || strings.Contains(session, "Secure") {
		t.Errorf("session cookie %q", session)
	}
	if p := b.get("/signin"); !strings.Contains(p.body, "You are signed in as <strong>ada</strong>") {
		t.Errorf("signed-in page: %s", p.body)
	}

	// (b) The same link again: the GET already says it is not valid, and
	// no session is made.
	if p := b.get("/signin?token=" + link); p.status != http.StatusBadRequest || !strings.Contains(p.body, "already used") || sessions() != 1 {
		t.Errorf("second redemption: %d, %d sessions", p.status, sessions())
	}

	// (c) Expired (the database clock decides, as for the admin's link),
	// after the form was fetched and before it is posted.
	late := e.signinLink(tn.principal)
	lateForm := hidden(b.get("/signin?token=" + late).body)
	e.exec(`UPDATE signin_links SET expires_at = now() - interval '1 second' WHERE token_hash = $1`, oauth.Hash(late))
	if p := b.post("/signin", lateForm); p.status != http.StatusBadRequest {
		t.Errorf("expired link: %d", p.status)
	}
	if p := b.get("/signin?token=" + late); p.status != http.StatusBadRequest {
		t.Errorf("expired link GET: %d", p.status)
	}

	// (d) Login CSRF: the attacker fetches the form for their own link and
	// makes the victim's browser post it. The victim has no matching cookie.
	attacker, victim := e.browser(t), e.browser(t)
	own := e.signinLink(tn.principal)
	stolen := hidden(attacker.get("/signin?token=" + own).body)
	if p := victim.post("/signin", stolen); p.status != http.StatusForbidden {
		t.Errorf("form posted from another browser: %d", p.status)
	}
	victim.get("/signin?token=" + e.signinLink(tn.principal)) // the victim has a CSRF cookie of their own
	if p := victim.post("/signin", stolen); p.status != http.StatusForbidden {
		t.Errorf("attacker's form with the victim's cookie: %d", p.status)
	}
	if p := victim.post("/signin", url.Values{"token": {own}}); p.status != http.StatusForbidden {
		t.Errorf("no CSRF field: %d", p.status)
	}
	if used(own) != "false" {
		t.Error("a refused POST used the link")
	}

	// (e) A session cookie set before sign-in is replaced and revoked.
	before := readJarCookie(b, e, "heyaira_session")
	b.signIn(tn.principal)
	after := readJarCookie(b, e, "heyaira_session")
	if before == "" || after == "" || before == after {
		t.Fatalf("session not replaced: %q → %q", before, after)
	}
	if _, err := e.db.Session(t.Context(), oauth.Hash(before)); err == nil {
		t.Error("the old session still works")
	}
}

func readJarCookie(b *browser, e *testEnv, name string) string {
	u, _ := url.Parse(e.srv.URL)
	for _, c := range b.c.Jar.Cookies(u) {
		if c.Name == name {
			return c.Value
		}
	}
	return ""
}

// TestOA18HostCookiesOnHTTPS: with an https public URL every cookie is
// __Host- prefixed, Secure, HttpOnly, SameSite=Lax and Path=/.
func TestOA18HostCookiesOnHTTPS(t *testing.T) {
	t.Parallel()
	e, _ := newOAuthEnv(t)
	tn := e.newTenant("o", "r")
	h := NewServer(slog.New(slog.DiscardHandler), Config{PublicURL: "https://heyaira.example"}, e.db, nil, e.cursors)
	link := e.signinLink(tn.principal)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "https://heyaira.example/signin?token="+link, nil))
	csrf := rec.Result().Cookies()
	if len(csrf) != 1 || csrf[0].Name != "__Host-heyaira_signin_csrf" {
		t.Fatalf("CSRF cookie %v", rec.Header().Values("Set-Cookie"))
	}
	req := httptest.NewRequest("POST", "https://heyaira.example/signin", strings.NewReader(hidden(rec.Body.String()).Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.AddCookie(csrf[0])
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("POST: %d %s", rec.Code, rec.Body)
	}
	for _, c := range append(rec.Result().Cookies(), csrf...) {
		if !strings.HasPrefix(c.Name, "__Host-") || !c.Secure || !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Path != "/" || c.Domain != "" {
			t.Errorf("cookie %+v", c)
		}
	}
}

// TestSigninContinuesToPendingRequest: the pending-request cookie can only
// ever send the browser to /oauth/authorize on this server.
// Row OA-18 (docs/security-tests.md).
func TestSigninContinuesToPendingRequest(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"//evil.example/x", "https://evil.example/", "/oauth/authorizeX?a", "/signin?x", "/oauth/authorize?a#b",
		"/oauth/authorize?a\\b", "/oauth/authorize?\r\nSet-Cookie:x"} {
		if _, ok := authserver.PendingTarget(authserver.PendingValue(v)); ok {
			t.Errorf("pending target %q accepted", v)
		}
	}
	if got, ok := authserver.PendingTarget(authserver.PendingValue("/oauth/authorize?client_id=x")); !ok || got != "/oauth/authorize?client_id=x" {
		t.Errorf("genuine target refused")
	}
	if _, ok := authserver.PendingTarget("not base64!"); ok {
		t.Error("garbage accepted")
	}
}
