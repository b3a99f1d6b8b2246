package server

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
	"heyaira/server/authserver"
)

// Rows JK-01, JK-02, JK-03, JK-04, JK-05, JK-06, JK-07 (docs/security-tests.md).
func TestJKMadeUpSecretsCostNoStatement(t *testing.T) {
	t.Parallel()
	s := newCIMDStandIn(t)
	const listed = "https://claude.ai/oauth/claude-code-client-metadata"
	e, wc := newCountedEnv(t, func(c *Config) { c.CIMD = s.resolver(t, authserver.CIMDFetchTimeout, listed) })
	tn := e.newTenant("o", "r")
	c := e.register("http://127.0.0.1/cb")
	rt := str(e.tokens(t, tn, c, "memory:read").body, "refresh_token")
	code := e.secrets.Mint(oauth.PrefixCode, time.Now())
	link := e.signinLink(tn.principal)
	b := e.browser(t)
	fakeClient := madeUp(c.id, oauth.PrefixClient)
	token := func(v url.Values) reply { return e.form("/oauth/token", v) }
	for _, tc := range []struct {
		row    string
		send   func() (status int, code string)
		status int
		code   string
	}{
		{"JK-01 bearer at /mcp", func() (int, string) {
			r := e.rpc(e.junkBearer(), "tools/list", nil)
			return r.status, r.header.Get("WWW-Authenticate")
		}, http.StatusUnauthorized, `Bearer error="invalid_token", resource_metadata="` + e.cfg.PublicURL +
			`/.well-known/oauth-protected-resource/mcp"`},
		{"JK-02 refresh token at /oauth/token", func() (int, string) {
			r := token(url.Values{"grant_type": {"refresh_token"}, "client_id": {c.id}, "refresh_token": {madeUp(rt, oauth.PrefixRefresh)}})
			return r.status, str(r.body, "error")
		}, http.StatusBadRequest, oauth.ErrCodeInvalidGrant},
		{"JK-03 authorization code at /oauth/token", func() (int, string) {
			r := token(url.Values{"grant_type": {"authorization_code"}, "client_id": {c.id}, "code": {madeUp(code, oauth.PrefixCode)},
				"code_verifier": {c.verifier}, "redirect_uri": {c.redirect}})
			return r.status, str(r.body, "error")
		}, http.StatusBadRequest, oauth.ErrCodeInvalidGrant},
		{"JK-02, JK-03 client_id at /oauth/token", func() (int, string) {
			r := token(url.Values{"grant_type": {"refresh_token"}, "client_id": {fakeClient}, "refresh_token": {rt}})
			return r.status, str(r.body, "error")
		}, http.StatusUnauthorized, oauth.ErrCodeInvalidClient},
		{"JK-04 token at /oauth/revoke", func() (int, string) {
			r := e.form("/oauth/revoke", url.Values{"client_id": {c.id}, "token": {madeUp(rt, oauth.PrefixRefresh)}})
			return r.status, ""
		}, http.StatusOK, ""},
		{"JK-04 client at /oauth/revoke", func() (int, string) {
			r := e.form("/oauth/revoke", url.Values{"client_id": {fakeClient}, "token": {rt}})
			return r.status, str(r.body, "error")
		}, http.StatusUnauthorized, oauth.ErrCodeInvalidClient},
		{"JK-05 sign-in link at GET /signin", func() (int, string) {
			p := b.get("/signin?token=" + madeUp(link, oauth.PrefixSignin))
			return p.status, pageTitle(p.body)
		}, http.StatusBadRequest, "Invalid sign-in link"},
		{"JK-05 session cookie at GET /signin", func() (int, string) {
			req, _ := http.NewRequest("GET", e.srv.URL+"/signin", nil)
			req.AddCookie(&http.Cookie{Name: authserver.CookieSession, Value: madeUp(link, oauth.PrefixSession)})
			p := b.do(req)
			return p.status, pageTitle(p.body)
		}, http.StatusOK, "Sign in"},
		{"JK-06 client_id at /oauth/authorize", func() (int, string) {
			p := b.get("/oauth/authorize?" + client{id: fakeClient, redirect: c.redirect, verifier: c.verifier}.authorizeQuery("memory:read").Encode())
			return p.status, pageTitle(p.body)
		}, http.StatusBadRequest, "Invalid authorization request"},
		{"JK-07 unlisted client-ID URL at /oauth/authorize", func() (int, string) {
			p := b.get("/oauth/authorize?" + cimdClient("https://claude.ai/oauth/made-up", "http://127.0.0.1/cb").authorizeQuery("memory:read").Encode())
			return p.status, pageTitle(p.body)
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
	if n := s.totalFetches(); n != 0 {
		t.Errorf("%d CIMD fetches, want none", n)
	}
}

// pageTitle is the title of an HTML page of the sign-in and consent flow.
func pageTitle(body string) string {
	_, rest, _ := strings.Cut(body, "<title>")
	title, _, _ := strings.Cut(rest, " · HeyAira</title>")
	return title
}
