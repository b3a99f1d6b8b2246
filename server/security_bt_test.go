package server

import (
	"bytes"
	"net/http"
	"net/url"
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

// TestBT07TokenThrottleUsesAnOAuthErrorCode: the token endpoint's throttling
// answer is 429 with Retry-After and an RFC 6749 error code
// (temporarily_unavailable), which OAuth client libraries know, not the
// tool error code rate_limited.
func TestBT07TokenThrottleUsesAnOAuthErrorCode(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	c := e.register("http://127.0.0.1/cb")
	var last reply
	for range refusalBurst + 1 {
		last = e.form("/oauth/token", url.Values{"grant_type": {"refresh_token"}, "client_id": {c.id},
			"refresh_token": {oauth.NewSecret(oauth.PrefixRefresh)}})
	}
	if last.status != http.StatusTooManyRequests || last.header.Get("Retry-After") == "" ||
		str(last.body, "error") != oauth.ErrCodeTemporarilyUnavailable {
		t.Errorf("throttled token request: %d %q %s", last.status, last.header.Get("Retry-After"), last.raw)
	}
}

// TestBT08BearerFailuresThrottledPerAddress: guessing bearer tokens at /mcp
// costs a lookup each only up to a per-address budget; then the address
// gets 429 with Retry-After before any lookup, while a valid token from
// another address still works.
func TestBT08BearerFailuresThrottledPerAddress(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	tn := e.newTenant("o", "r")
	good := e.token(tn, "memory:read")
	for range refusalBurst {
		if s := e.mcpStatus("hya_" + strings.Repeat("x", 52)); s != http.StatusUnauthorized {
			t.Fatalf("a guessed token: %d, want 401", s)
		}
	}
	r := e.rpc("hya_"+strings.Repeat("y", 52), "tools/list", nil)
	if r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") == "" {
		t.Errorf("after the burst: %d %q %s, want 429 with Retry-After", r.status, r.header.Get("Retry-After"), r.raw)
	}
	// The address is refused even with a valid token until the bucket
	// refills; another address is not affected.
	req, _ := http.NewRequest("POST", e.srv.URL+"/mcp",
		strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	req.Header.Set("Authorization", "Bearer "+good)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := clientFrom("127.0.0.2").Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("a valid token from another address: %d", resp.StatusCode)
	}
}
