package server

import (
	"bytes"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"heyaira/oauth"
)

// TestBT04MetricsNotPublicByDefault: the main listener serves /metrics only
// when the operator says it is private (MetricsOnMain); by default an
// anonymous caller gets 404, and nothing of the metrics.
func TestBT04MetricsNotPublicByDefault(t *testing.T) {
	t.Parallel()
	for _, on := range []bool{false, true} {
		e := newTestEnv(t, func(c *Config) { c.MetricsOnMain = on })
		resp, err := http.Get(e.srv.URL + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		b.ReadFrom(resp.Body)
		resp.Body.Close()
		has := strings.Contains(b.String(), "heyaira_")
		if on && (resp.StatusCode != 200 || !has) || !on && (resp.StatusCode != 404 || has) {
			t.Errorf("MetricsOnMain=%v: GET /metrics = %d, metrics in body: %v", on, resp.StatusCode, has)
		}
	}
}

// TestBT06RedirectURIRequiredWhenSent: a code issued for a request that
// carried redirect_uri is redeemed only with the same redirect_uri (RFC 6749
// §4.1.3): omitting it is invalid_grant and issues nothing. A client with
// one registered URI that sent none at /authorize may omit it at /token.
func TestBT06RedirectURIRequiredWhenSent(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	tn := e.newTenant("o", "r")
	c := e.register("http://127.0.0.1/cb")
	r := e.exchange(c, e.flow(t, tn, c, "memory:read", "memory:read"), "redirect_uri", "")
	if r.status != http.StatusBadRequest || str(r.body, "error") != "invalid_grant" ||
		!strings.Contains(str(r.body, "error_description"), "redirect_uri is required") || str(r.body, "access_token") != "" {
		t.Errorf("omitted redirect_uri: %d %s", r.status, r.raw)
	}

	// Sent at neither: accepted.
	b := e.browser(t)
	b.signIn(tn.principal)
	q := c.authorizeQuery("memory:read")
	q.Del("redirect_uri")
	code := codeFrom(t, b.approve(b.consent(q), tn.project, "memory:read"))
	if r := e.exchange(c, code, "redirect_uri", ""); r.status != http.StatusOK {
		t.Errorf("redirect_uri sent at neither endpoint: %d %s", r.status, r.raw)
	}
}

// TestBT07BadGrantsGetTheirOAuthErrorNeverAThrottle: however many made-up
// refresh tokens name a client, each gets 400 invalid_grant, the RFC 6749
// answer, never a 429 the client would have to wait out: nothing is
// charged, because a made-up secret costs no lookup.
func TestBT07BadGrantsGetTheirOAuthErrorNeverAThrottle(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	tn := e.newTenant("o", "r")
	c := e.register("http://127.0.0.1/cb")
	rt := str(e.tokens(t, tn, c, "memory:read").body, "refresh_token")
	got := map[string]int{}
	for range 100 {
		r := e.form("/oauth/token", url.Values{"grant_type": {"refresh_token"}, "client_id": {c.id},
			"refresh_token": {madeUp(rt, oauth.PrefixRefresh)}})
		got[strconv.Itoa(r.status)+" "+str(r.body, "error")]++
	}
	if got["400 "+oauth.ErrCodeInvalidGrant] != 100 {
		t.Errorf("100 made-up refresh tokens: %v, want 100 × 400 invalid_grant", got)
	}
}

// TestBT08GuessedBearersCostNothing: guessed bearer tokens at /mcp get 401
// invalid_token however many come from one address, and a valid token from
// that address is served: nothing is charged to the address.
func TestBT08GuessedBearersCostNothing(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	tn := e.newTenant("o", "r")
	good := e.token(tn, "memory:read")
	for i := range 100 {
		if r := e.rpc(e.junkBearer(), "tools/list", nil); r.status != http.StatusUnauthorized ||
			!strings.Contains(r.header.Get("WWW-Authenticate"), "invalid_token") {
			t.Fatalf("guessed token %d: %d %q, want 401 invalid_token", i+1, r.status, r.header.Get("WWW-Authenticate"))
		}
	}
	if s := e.mcpStatus(good); s != http.StatusOK {
		t.Errorf("a valid token from the guesser's address: %d", s)
	}
}
