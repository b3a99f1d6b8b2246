package authserver_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"heyaira/oauth"
	"heyaira/server"
	"heyaira/server/authserver"
	"heyaira/server/internal/servertest"
)

// TestOA18SigninLink: GET never redeems; POST redeems once; expired links
// fail; a POST without the CSRF token of this browser is refused (login
// CSRF); a session planted before sign-in is replaced.
// Row BT-41 (docs/security-tests.md).
func TestOA18SigninLink(t *testing.T) {
	t.Parallel()
	e, _ := servertest.NewOAuth(t)
	tn := e.NewTenant("o", "r")
	used := func(link string) string {
		return e.QueryString(`SELECT (used_at IS NOT NULL)::text FROM signin_links WHERE token_hash = $1`, oauth.Hash(link))
	}
	sessions := func() int { return e.CountRows("browser_sessions") }

	// (a) Link scanners fetch the link: nothing happens.
	link := e.SigninLink(tn.Principal)
	b := e.Browser(t)
	for range 3 {
		if p := b.Get("/signin?token=" + link); p.Status != 200 || !strings.Contains(p.Body, `<button type="submit">Sign in</button>`) {
			t.Fatalf("GET: %d %s", p.Status, p.Body)
		}
	}
	if used(link) != "false" || sessions() != 0 {
		t.Fatal("GET redeemed the link")
	}
	form := servertest.Hidden(b.Get("/signin?token=" + link).Body)
	p := b.Post("/signin", form)
	if p.Status != http.StatusSeeOther || p.Header.Get("Location") != "/signin" || used(link) != "true" || sessions() != 1 {
		t.Fatalf("POST: %d %q", p.Status, p.Header.Get("Location"))
	}
	cookies := p.Header.Values("Set-Cookie")
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
	if p := b.Get("/signin"); !strings.Contains(p.Body, "You are signed in as <strong>ada</strong>") {
		t.Errorf("signed-in page: %s", p.Body)
	}

	// (b) The same link again: the GET already says it is not valid, and
	// no session is made.
	if p := b.Get("/signin?token=" + link); p.Status != http.StatusBadRequest || !strings.Contains(p.Body, "already used") || sessions() != 1 {
		t.Errorf("second redemption: %d, %d sessions", p.Status, sessions())
	}

	// (c) Expired (the database clock decides, as for the admin's link),
	// after the form was fetched and before it is posted.
	late := e.SigninLink(tn.Principal)
	lateForm := servertest.Hidden(b.Get("/signin?token=" + late).Body)
	e.Exec(`UPDATE signin_links SET expires_at = now() - interval '1 second' WHERE token_hash = $1`, oauth.Hash(late))
	if p := b.Post("/signin", lateForm); p.Status != http.StatusBadRequest {
		t.Errorf("expired link: %d", p.Status)
	}
	if p := b.Get("/signin?token=" + late); p.Status != http.StatusBadRequest {
		t.Errorf("expired link GET: %d", p.Status)
	}

	// (d) Login CSRF: the attacker fetches the form for their own link and
	// makes the victim's browser post it. The victim has no matching cookie.
	attacker, victim := e.Browser(t), e.Browser(t)
	own := e.SigninLink(tn.Principal)
	stolen := servertest.Hidden(attacker.Get("/signin?token=" + own).Body)
	if p := victim.Post("/signin", stolen); p.Status != http.StatusForbidden {
		t.Errorf("form posted from another browser: %d", p.Status)
	}
	victim.Get("/signin?token=" + e.SigninLink(tn.Principal)) // the victim has a CSRF cookie of their own
	if p := victim.Post("/signin", stolen); p.Status != http.StatusForbidden {
		t.Errorf("attacker's form with the victim's cookie: %d", p.Status)
	}
	if p := victim.Post("/signin", url.Values{"token": {own}}); p.Status != http.StatusForbidden {
		t.Errorf("no CSRF field: %d", p.Status)
	}
	if used(own) != "false" {
		t.Error("a refused POST used the link")
	}

	// (e) A session cookie set before sign-in is replaced and revoked.
	before := servertest.ReadJarCookie(b, e, "heyaira_session")
	b.SignIn(tn.Principal)
	after := servertest.ReadJarCookie(b, e, "heyaira_session")
	if before == "" || after == "" || before == after {
		t.Fatalf("session not replaced: %q → %q", before, after)
	}
	if _, err := e.DB.Session(t.Context(), oauth.Hash(before)); err == nil {
		t.Error("the old session still works")
	}
}

// TestOA18HostCookiesOnHTTPS: with an https public URL every cookie is
// __Host- prefixed, Secure, HttpOnly, SameSite=Lax and Path=/.
func TestOA18HostCookiesOnHTTPS(t *testing.T) {
	t.Parallel()
	e, _ := servertest.NewOAuth(t)
	tn := e.NewTenant("o", "r")
	h := server.NewServer(slog.New(slog.DiscardHandler), server.Config{PublicURL: "https://heyaira.example"}, e.DB, nil, e.Cursors)
	link := e.SigninLink(tn.Principal)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "https://heyaira.example/signin?token="+link, nil))
	csrf := rec.Result().Cookies()
	if len(csrf) != 1 || csrf[0].Name != "__Host-heyaira_signin_csrf" {
		t.Fatalf("CSRF cookie %v", rec.Header().Values("Set-Cookie"))
	}
	req := httptest.NewRequest("POST", "https://heyaira.example/signin", strings.NewReader(servertest.Hidden(rec.Body.String()).Encode()))
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
