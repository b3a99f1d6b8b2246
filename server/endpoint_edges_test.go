package server_test

import (
	"bytes"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"heyaira/oauth"
	"heyaira/server"
	"heyaira/server/internal/servertest"
)

// TestBT04MetricsNotPublicByDefault: the main listener serves /metrics only
// when the operator says it is private (MetricsOnMain); by default an
// anonymous caller gets 404, and nothing of the metrics.
func TestBT04MetricsNotPublicByDefault(t *testing.T) {
	t.Parallel()
	for _, on := range []bool{false, true} {
		e := servertest.New(t, func(c *server.Config) { c.MetricsOnMain = on })
		resp, err := http.Get(e.Srv.URL + "/metrics")
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
	e := servertest.New(t)
	tn := e.NewTenant("o", "r")
	c := e.Register("http://127.0.0.1/cb")
	r := e.Exchange(c, e.Flow(t, tn, c, "memory:read", "memory:read"), "redirect_uri", "")
	if r.Status != http.StatusBadRequest || servertest.Str(r.Body, "error") != "invalid_grant" ||
		!strings.Contains(servertest.Str(r.Body, "error_description"), "redirect_uri is required") || servertest.Str(r.Body, "access_token") != "" {
		t.Errorf("omitted redirect_uri: %d %s", r.Status, r.Raw)
	}

	// Sent at neither: accepted.
	b := e.Browser(t)
	b.SignIn(tn.Principal)
	q := c.AuthorizeQuery("memory:read")
	q.Del("redirect_uri")
	code := servertest.CodeFrom(t, b.Approve(b.Consent(q), tn.Project, "memory:read"))
	if r := e.Exchange(c, code, "redirect_uri", ""); r.Status != http.StatusOK {
		t.Errorf("redirect_uri sent at neither endpoint: %d %s", r.Status, r.Raw)
	}
}

// TestBT07BadGrantsGetTheirOAuthErrorNeverAThrottle: however many made-up
// refresh tokens name a client, each gets 400 invalid_grant, the RFC 6749
// answer, never a 429 the client would have to wait out: nothing is
// charged, because a made-up secret costs no lookup.
func TestBT07BadGrantsGetTheirOAuthErrorNeverAThrottle(t *testing.T) {
	t.Parallel()
	e := servertest.New(t)
	tn := e.NewTenant("o", "r")
	c := e.Register("http://127.0.0.1/cb")
	rt := servertest.Str(e.Tokens(t, tn, c, "memory:read").Body, "refresh_token")
	got := map[string]int{}
	for range 100 {
		r := e.Form("/oauth/token", url.Values{"grant_type": {"refresh_token"}, "client_id": {c.ID},
			"refresh_token": {madeUp(rt, oauth.PrefixRefresh)}})
		got[strconv.Itoa(r.Status)+" "+servertest.Str(r.Body, "error")]++
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
	e := servertest.New(t)
	tn := e.NewTenant("o", "r")
	good := e.Token(tn, "memory:read")
	for i := range 100 {
		if r := e.RPC(junkBearer(e), "tools/list", nil); r.Status != http.StatusUnauthorized ||
			!strings.Contains(r.Header.Get("WWW-Authenticate"), "invalid_token") {
			t.Fatalf("guessed token %d: %d %q, want 401 invalid_token", i+1, r.Status, r.Header.Get("WWW-Authenticate"))
		}
	}
	if s := e.MCPStatus(good); s != http.StatusOK {
		t.Errorf("a valid token from the guesser's address: %d", s)
	}
}
