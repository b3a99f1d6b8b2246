package server

import (
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"heyaira/oauth"
)

// TestOA05PKCEDowngrade: a code whose stored challenge is empty (a state
// the handlers never create) cannot be redeemed with any verifier.
func TestOA05PKCEDowngrade(t *testing.T) {
	t.Parallel()
	e, _ := newOAuthEnv(t)
	tn := e.newTenant("o", "r")
	c := e.register("https://client.example/cb")
	e.flow(t, tn, c, "memory:read", "memory:read")
	code := oauth.NewSecret(oauth.PrefixCode)
	e.exec(`INSERT INTO oauth_codes (code_hash, client_id, grant_id, redirect_uri, code_challenge, scopes, resource, expires_at)
		SELECT $1, client_id, grant_id, redirect_uri, '', scopes, resource, now() + interval '5 minutes' FROM oauth_codes LIMIT 1`,
		oauth.Hash(code))
	if r := e.exchange(c, code); r.status != 400 || r.body["error"] != "invalid_grant" {
		t.Errorf("downgraded code: %d %s", r.status, r.raw)
	}
	if n := e.countRows("oauth_tokens"); n != 0 {
		t.Errorf("%d tokens issued", n)
	}
}

// TestOA06VerifierRefusedAndCodeDies: wrong or malformed verifiers are
// invalid_grant, a missing one invalid_request; after a failed attempt the
// code is dead, even for the right verifier (docs/oauth.md).
func TestOA06VerifierRefusedAndCodeDies(t *testing.T) {
	t.Parallel()
	e, _ := newOAuthEnv(t)
	tn := e.newTenant("o", "r")
	c := e.register("https://client.example/cb")
	if r := e.exchange(c, e.flow(t, tn, c, "", "memory:read"), "code_verifier", ""); r.status != 400 || r.body["error"] != "invalid_request" {
		t.Errorf("missing verifier: %d %s", r.status, r.raw)
	}
	for name, v := range map[string]string{
		"wrong":     strings.Repeat("w", 43),
		"42 chars":  c.verifier[:42],
		"129 chars": c.verifier + strings.Repeat("a", 129-len(c.verifier)),
		"plus":      c.verifier[:42] + "+",
		"equals":    c.verifier[:42] + "=",
	} {
		code := e.flow(t, tn, c, "", "memory:read")
		if r := e.exchange(c, code, "code_verifier", v); r.status != 400 || r.body["error"] != "invalid_grant" {
			t.Errorf("%s verifier: %d %s", name, r.status, r.raw)
		}
		if r := e.exchange(c, code); r.status != 400 || r.body["error"] != "invalid_grant" {
			t.Errorf("right verifier after %s: %d %s", name, r.status, r.raw)
		}
	}
	if n := e.countRows("oauth_tokens"); n != 0 {
		t.Errorf("%d tokens issued", n)
	}
}

// TestOA07CodeReplayRevokesFirstTokens: the second redemption is refused; a
// replay with valid parameters also revokes the first redemption's tokens,
// one with a wrong verifier does not.
func TestOA07CodeReplayRevokesFirstTokens(t *testing.T) {
	t.Parallel()
	e, _ := newOAuthEnv(t)
	tn := e.newTenant("o", "r")
	c := e.register("https://client.example/cb")
	code := e.flow(t, tn, c, "", "memory:read")
	first := e.exchange(c, code)
	if first.status != 200 || e.mcpStatus(str(first.body, "access_token")) != 200 {
		t.Fatalf("first redemption: %d %s", first.status, first.raw)
	}
	// A replay that fails PKCE revokes nothing: knowing the code is not enough.
	if r := e.exchange(c, code, "code_verifier", strings.Repeat("w", 43)); r.status != 400 || r.body["error"] != "invalid_grant" {
		t.Errorf("replay with a wrong verifier: %d %s", r.status, r.raw)
	}
	if s := e.mcpStatus(str(first.body, "access_token")); s != http.StatusOK {
		t.Errorf("first access token after an invalid replay: %d, want 200", s)
	}
	if r := e.exchange(c, code); r.status != 400 || r.body["error"] != "invalid_grant" {
		t.Errorf("replay: %d %s", r.status, r.raw)
	}
	if s := e.mcpStatus(str(first.body, "access_token")); s != http.StatusUnauthorized {
		t.Errorf("first access token after replay: %d, want 401", s)
	}
	if r := e.refresh(c, str(first.body, "refresh_token")); r.status != 400 || r.body["error"] != "invalid_grant" {
		t.Errorf("first refresh token after replay: %d %s", r.status, r.raw)
	}
}

// TestOA08TwentyConcurrentRedemptions: exactly one 200, 19 invalid_grant,
// one token family, no 5xx.
func TestOA08TwentyConcurrentRedemptions(t *testing.T) {
	t.Parallel()
	e, _ := newOAuthEnv(t)
	tn := e.newTenant("o", "r")
	c := e.register("https://client.example/cb")
	code := e.flow(t, tn, c, "", "memory:read")
	statuses := make([]int, 20)
	errs := make([]any, 20)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range statuses {
		wg.Go(func() {
			<-start
			r := e.exchange(c, code)
			statuses[i], errs[i] = r.status, r.body["error"]
		})
	}
	close(start)
	wg.Wait()
	ok := 0
	for i, s := range statuses {
		switch {
		case s == 200:
			ok++
		case s != 400 || errs[i] != "invalid_grant":
			t.Errorf("redemption %d: %d %v", i, s, errs[i])
		}
	}
	if ok != 1 {
		t.Errorf("%d successes, want exactly 1", ok)
	}
	if n := e.queryString(`SELECT count(DISTINCT family_id)::text FROM oauth_tokens`); n != "1" {
		t.Errorf("%s token families, want 1", n)
	}
	// The losers presented the code with valid parameters: replays, so the
	// winner's tokens are revoked too (docs/oauth.md).
	if n := e.queryString(`SELECT count(*)::text FROM oauth_tokens WHERE revoked_at IS NULL`); n != "0" {
		t.Errorf("%s live tokens after 19 replays, want 0", n)
	}
}

// TestOA09CodeBindings: client, redirect URI, resource and lifetime.
func TestOA09CodeBindings(t *testing.T) {
	t.Parallel()
	e, clock := newOAuthEnv(t)
	tn := e.newTenant("o", "r")
	a := e.register("https://a.example/cb")
	b := e.register("https://b.example/cb")
	bWithA := b
	bWithA.verifier = a.verifier
	for name, tc := range map[string]struct {
		redeem func(code string) reply
		err    string
	}{
		"other client":      {func(code string) reply { return e.exchange(bWithA, code, "redirect_uri", a.redirect) }, "invalid_grant"},
		"other redirect":    {func(code string) reply { return e.exchange(a, code, "redirect_uri", "https://a.example/cb2") }, "invalid_grant"},
		"foreign resource":  {func(code string) reply { return e.exchange(a, code, "resource", "https://other.example/mcp") }, "invalid_target"},
		"10 min 1 s later":  {func(code string) reply { clock.advance(10*time.Minute + time.Second); return e.exchange(a, code) }, "invalid_grant"},
		"unknown code":      {func(string) reply { return e.exchange(a, oauth.NewSecret(oauth.PrefixCode)) }, "invalid_grant"},
		"access token":      {func(string) reply { return e.exchange(a, oauth.NewSecret(oauth.PrefixAccess)) }, "invalid_grant"},
		"unknown client id": {func(code string) reply { return e.exchange(a, code, "client_id", "nope") }, "invalid_client"},
	} {
		code := e.flow(t, tn, a, "", "memory:read")
		r := tc.redeem(code)
		if r.body["error"] != tc.err || r.status/100 != 4 {
			t.Errorf("%s: %d %s, want %s", name, r.status, r.raw, tc.err)
		}
	}
	code := e.flow(t, tn, a, "", "memory:read")
	clock.advance(10*time.Minute - time.Second)
	if r := e.exchange(a, code); r.status != 200 {
		t.Errorf("at 9 min 59 s: %d %s", r.status, r.raw)
	}
}

// TestOA13TokenResponses: JSON, no-store, token_type, expires_in, scope;
// errors are {"error": …} with no internals; the redirect has exactly one
// code, state and iss.
func TestOA13TokenResponses(t *testing.T) {
	t.Parallel()
	e, _ := newOAuthEnv(t)
	tn := e.newTenant("o", "r")
	c := e.register("https://client.example/cb")
	bw := e.browser(t)
	bw.signIn(tn.principal)
	q := c.authorizeQuery("memory:read")
	q.Set("state", "a b&c=d/é")
	p := bw.approve(bw.consent(q), tn.project, "memory:read")
	loc, _ := url.Parse(p.header.Get("Location"))
	params := loc.Query()
	if len(params["code"]) != 1 || len(params["iss"]) != 1 || len(params["state"]) != 1 ||
		params.Get("state") != "a b&c=d/é" || params.Get("iss") != e.cfg.PublicURL {
		t.Errorf("authorization response %q", p.header.Get("Location"))
	}
	ok := e.exchange(c, params.Get("code"))
	bad := e.exchange(c, params.Get("code"))
	rt := e.refresh(c, "hyr_nope")
	for name, r := range map[string]reply{"success": ok, "replay": bad, "bad refresh": rt} {
		if r.header.Get("Cache-Control") != "no-store" || r.header.Get("Content-Type") != "application/json" {
			t.Errorf("%s headers: %v", name, r.header)
		}
	}
	if ok.status != 200 || ok.body["token_type"] != "Bearer" || ok.body["expires_in"] != float64(3600) ||
		ok.body["scope"] != "memory:read" || !strings.HasPrefix(str(ok.body, "access_token"), "hya_") ||
		!strings.HasPrefix(str(ok.body, "refresh_token"), "hyr_") {
		t.Errorf("success body %s", ok.raw)
	}
	for name, r := range map[string]reply{"replay": bad, "bad refresh": rt} {
		if r.status != 400 || len(r.body) > 2 || r.body["error"] != "invalid_grant" {
			t.Errorf("%s body %s", name, r.raw)
		}
	}
	if r := e.postBody("/oauth/token", "application/json", `{"grant_type":"authorization_code"}`); r.status != 400 ||
		r.body["error"] != "invalid_request" || r.header.Get("Cache-Control") != "no-store" {
		t.Errorf("JSON body: %d %s", r.status, r.raw)
	}
	if r := e.postBody("/oauth/token", "application/x-www-form-urlencoded", "grant_type=refresh_token&grant_type=authorization_code"); r.status != 400 ||
		r.body["error"] != "invalid_request" {
		t.Errorf("repeated parameter: %d %s", r.status, r.raw)
	}
}

// basicAuth is an HTTP Basic Authorization value as golang.org/x/oauth2 sends it.
func basicAuth(user, pass string) string {
	return "Basic " + base64Std(url.QueryEscape(user)+":"+pass)
}

// TestRevokeClientAuthentication: the revocation endpoint authenticates its
// client as the token endpoint does (RFC 7009 §2.1), and its 401 to a client
// that sent an Authorization header names the scheme (RFC 6749 §5.2, which
// RFC 7009 §2.2.1 applies). A refused revocation revokes nothing.
func TestRevokeClientAuthentication(t *testing.T) {
	t.Parallel()
	e, _ := newOAuthEnv(t)
	tn := e.newTenant("o", "r")
	c := e.register("https://client.example/cb")
	tk := e.tokens(t, tn, c, "memory:read")
	access := str(tk.body, "access_token")
	body := url.Values{"token": {access}}.Encode()
	if r := e.postBody("/oauth/revoke", "application/x-www-form-urlencoded", body, "Authorization", basicAuth(c.id, "secret")); r.status != 401 ||
		r.body["error"] != "invalid_client" || r.header.Get("WWW-Authenticate") != `Basic realm="heyaira"` {
		t.Errorf("Basic with a secret: %d %q %s", r.status, r.header.Get("WWW-Authenticate"), r.raw)
	}
	if s := e.mcpStatus(access); s != http.StatusOK {
		t.Fatalf("after a refused revocation the access token answers %d, want 200", s)
	}
	if r := e.postBody("/oauth/revoke", "application/x-www-form-urlencoded", body, "Authorization", basicAuth(c.id, "")); r.status != 200 {
		t.Errorf("Basic with an empty password: %d %s", r.status, r.raw)
	}
	if s := e.mcpStatus(access); s != http.StatusUnauthorized {
		t.Errorf("revoked access token: %d", s)
	}
}

// TestTokenClientAuthentication: public clients authenticate by client_id,
// in the body or as HTTP Basic with an empty password; secrets are refused.
func TestTokenClientAuthentication(t *testing.T) {
	t.Parallel()
	e, _ := newOAuthEnv(t)
	tn := e.newTenant("o", "r")
	c := e.register("https://client.example/cb")
	code := e.flow(t, tn, c, "", "memory:read")
	v := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "code_verifier": {c.verifier}, "redirect_uri": {c.redirect}}
	if r := e.postBody("/oauth/token", "application/x-www-form-urlencoded", v.Encode(), "Authorization", basicAuth(c.id, "secret")); r.status != 401 ||
		r.body["error"] != "invalid_client" || r.header.Get("WWW-Authenticate") == "" {
		t.Errorf("Basic with a secret: %d %s", r.status, r.raw)
	}
	if r := e.postBody("/oauth/token", "application/x-www-form-urlencoded", v.Encode()); r.status != 401 || r.body["error"] != "invalid_client" {
		t.Errorf("no client: %d %s", r.status, r.raw)
	}
	if r := e.postBody("/oauth/token", "application/x-www-form-urlencoded", v.Encode(), "Authorization", basicAuth(c.id, "")); r.status != 200 {
		t.Errorf("Basic with an empty password: %d %s", r.status, r.raw)
	}
}
