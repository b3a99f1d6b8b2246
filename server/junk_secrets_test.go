package server_test

// Rows JK-01 to JK-07 (docs/security-tests.md): a made-up secret of the
// right shape (a real one's prefix, length and alphabet) is refused on
// every path that takes one, with its usual answer and no store call: the
// MAC every issued secret carries (oauth/minted.go) is checked first. Each
// path is the one the review measured in statements per 100 made-up
// secrets: 200 at /mcp, 600 per grant type at /oauth/token, 500 at
// /oauth/revoke, 100 at /signin and at /oauth/authorize, 100 for unlisted
// client-ID URLs.

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"heyaira/oauth"
	"heyaira/server"
	"heyaira/server/authserver"
	"heyaira/server/internal/servertest"
)

// Rows JK-01, JK-02, JK-03, JK-04, JK-05, JK-06, JK-07 (docs/security-tests.md).
func TestJKMadeUpSecretsCostNoStatement(t *testing.T) {
	t.Parallel()
	s := servertest.NewCIMDStandIn(t)
	const listed = "https://claude.ai/oauth/claude-code-client-metadata"
	e, wc := servertest.NewCounted(t, func(c *server.Config) { c.CIMD = s.Resolver(t, authserver.CIMDFetchTimeout, listed) })
	tn := e.NewTenant("o", "r")
	c := e.Register("http://127.0.0.1/cb")
	rt := servertest.Str(e.Tokens(t, tn, c, "memory:read").Body, "refresh_token")
	code := e.Secrets.Mint(oauth.PrefixCode, time.Now())
	link := e.SigninLink(tn.Principal)
	b := e.Browser(t)
	fakeClient := madeUp(c.ID, oauth.PrefixClient)
	token := func(v url.Values) servertest.Reply { return e.Form("/oauth/token", v) }
	for _, tc := range []struct {
		row    string
		send   func() (status int, code string)
		status int
		code   string
	}{
		{"JK-01 bearer at /mcp", func() (int, string) {
			r := e.RPC(junkBearer(e), "tools/list", nil)
			return r.Status, r.Header.Get("WWW-Authenticate")
		}, http.StatusUnauthorized, `Bearer error="invalid_token", resource_metadata="` + e.Cfg.PublicURL +
			`/.well-known/oauth-protected-resource/mcp"`},
		{"JK-02 refresh token at /oauth/token", func() (int, string) {
			r := token(url.Values{"grant_type": {"refresh_token"}, "client_id": {c.ID}, "refresh_token": {madeUp(rt, oauth.PrefixRefresh)}})
			return r.Status, servertest.Str(r.Body, "error")
		}, http.StatusBadRequest, oauth.ErrCodeInvalidGrant},
		{"JK-03 authorization code at /oauth/token", func() (int, string) {
			r := token(url.Values{"grant_type": {"authorization_code"}, "client_id": {c.ID}, "code": {madeUp(code, oauth.PrefixCode)},
				"code_verifier": {c.Verifier}, "redirect_uri": {c.Redirect}})
			return r.Status, servertest.Str(r.Body, "error")
		}, http.StatusBadRequest, oauth.ErrCodeInvalidGrant},
		{"JK-02, JK-03 client_id at /oauth/token", func() (int, string) {
			r := token(url.Values{"grant_type": {"refresh_token"}, "client_id": {fakeClient}, "refresh_token": {rt}})
			return r.Status, servertest.Str(r.Body, "error")
		}, http.StatusUnauthorized, oauth.ErrCodeInvalidClient},
		{"JK-04 token at /oauth/revoke", func() (int, string) {
			r := e.Form("/oauth/revoke", url.Values{"client_id": {c.ID}, "token": {madeUp(rt, oauth.PrefixRefresh)}})
			return r.Status, ""
		}, http.StatusOK, ""},
		{"JK-04 client at /oauth/revoke", func() (int, string) {
			r := e.Form("/oauth/revoke", url.Values{"client_id": {fakeClient}, "token": {rt}})
			return r.Status, servertest.Str(r.Body, "error")
		}, http.StatusUnauthorized, oauth.ErrCodeInvalidClient},
		{"JK-05 sign-in link at GET /signin", func() (int, string) {
			p := b.Get("/signin?token=" + madeUp(link, oauth.PrefixSignin))
			return p.Status, pageTitle(p.Body)
		}, http.StatusBadRequest, "Invalid sign-in link"},
		{"JK-05 session cookie at GET /signin", func() (int, string) {
			req, _ := http.NewRequest("GET", e.Srv.URL+"/signin", nil)
			req.AddCookie(&http.Cookie{Name: authserver.CookieSession, Value: madeUp(link, oauth.PrefixSession)})
			p := b.Do(req)
			return p.Status, pageTitle(p.Body)
		}, http.StatusOK, "Sign in"},
		{"JK-06 client_id at /oauth/authorize", func() (int, string) {
			p := b.Get("/oauth/authorize?" + servertest.Client{ID: fakeClient, Redirect: c.Redirect, Verifier: c.Verifier}.AuthorizeQuery("memory:read").Encode())
			return p.Status, pageTitle(p.Body)
		}, http.StatusBadRequest, "Invalid authorization request"},
		{"JK-07 unlisted client-ID URL at /oauth/authorize", func() (int, string) {
			p := b.Get("/oauth/authorize?" + servertest.CIMDClient("https://claude.ai/oauth/made-up", "http://127.0.0.1/cb").AuthorizeQuery("memory:read").Encode())
			return p.Status, pageTitle(p.Body)
		}, http.StatusBadRequest, "Application not recognised"},
	} {
		for i := range 20 {
			var status int
			var got string
			n := statementsOf(wc, func() { status, got = tc.send() })
			if status != tc.status || got != tc.code || n != 0 {
				t.Errorf("%s, made-up secret %d: %d %q, %d statements; want %d %q and none", tc.row, i+1, status, got, n, tc.status, tc.code)
				break
			}
		}
	}
	if n := s.TotalFetches(); n != 0 {
		t.Errorf("%d CIMD fetches, want none", n)
	}
}

// pageTitle is the title of an HTML page of the sign-in and consent flow.
func pageTitle(body string) string {
	_, rest, _ := strings.Cut(body, "<title>")
	title, _, _ := strings.Cut(rest, " · HeyAira</title>")
	return title
}
