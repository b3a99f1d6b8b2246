package authserver_test

import (
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"heyaira/oauth"
	"heyaira/server/internal/servertest"
)

// TestOA05PKCEDowngrade: a code whose stored challenge is empty (a state
// the handlers never create) cannot be redeemed with any verifier.
func TestOA05PKCEDowngrade(t *testing.T) {
	t.Parallel()
	e, _ := servertest.NewOAuth(t)
	tn := e.NewTenant("o", "r")
	c := e.Register("https://client.example/cb")
	e.Flow(t, tn, c, "memory:read", "memory:read")
	code := oauth.NewSecret(oauth.PrefixCode)
	e.Exec(`INSERT INTO oauth_codes (code_hash, client_id, grant_id, redirect_uri, code_challenge, scopes, resource, expires_at)
		SELECT $1, client_id, grant_id, redirect_uri, '', scopes, resource, now() + interval '5 minutes' FROM oauth_codes LIMIT 1`,
		oauth.Hash(code))
	if r := e.Exchange(c, code); r.Status != 400 || r.Body["error"] != "invalid_grant" {
		t.Errorf("downgraded code: %d %s", r.Status, r.Raw)
	}
	if n := e.CountRows("oauth_tokens"); n != 0 {
		t.Errorf("%d tokens issued", n)
	}
}

// TestOA06VerifierRefusedAndCodeDies: wrong or malformed verifiers are
// invalid_grant, a missing one invalid_request; after a failed attempt the
// code is dead, even for the right verifier (docs/oauth.md).
func TestOA06VerifierRefusedAndCodeDies(t *testing.T) {
	t.Parallel()
	e, _ := servertest.NewOAuth(t)
	tn := e.NewTenant("o", "r")
	c := e.Register("https://client.example/cb")
	if r := e.Exchange(c, e.Flow(t, tn, c, "", "memory:read"), "code_verifier", ""); r.Status != 400 || r.Body["error"] != "invalid_request" {
		t.Errorf("missing verifier: %d %s", r.Status, r.Raw)
	}
	for name, v := range map[string]string{
		"wrong":     strings.Repeat("w", 43),
		"42 chars":  c.Verifier[:42],
		"129 chars": c.Verifier + strings.Repeat("a", 129-len(c.Verifier)),
		"plus":      c.Verifier[:42] + "+",
		"equals":    c.Verifier[:42] + "=",
	} {
		code := e.Flow(t, tn, c, "", "memory:read")
		if r := e.Exchange(c, code, "code_verifier", v); r.Status != 400 || r.Body["error"] != "invalid_grant" {
			t.Errorf("%s verifier: %d %s", name, r.Status, r.Raw)
		}
		if r := e.Exchange(c, code); r.Status != 400 || r.Body["error"] != "invalid_grant" {
			t.Errorf("right verifier after %s: %d %s", name, r.Status, r.Raw)
		}
	}
	if n := e.CountRows("oauth_tokens"); n != 0 {
		t.Errorf("%d tokens issued", n)
	}
}

// TestOA07CodeReplayRevokesFirstTokens: the second redemption is refused; a
// replay with valid parameters also revokes the first redemption's tokens,
// one with a wrong verifier does not.
func TestOA07CodeReplayRevokesFirstTokens(t *testing.T) {
	t.Parallel()
	e, _ := servertest.NewOAuth(t)
	tn := e.NewTenant("o", "r")
	c := e.Register("https://client.example/cb")
	code := e.Flow(t, tn, c, "", "memory:read")
	first := e.Exchange(c, code)
	if first.Status != 200 || e.MCPStatus(servertest.Str(first.Body, "access_token")) != 200 {
		t.Fatalf("first redemption: %d %s", first.Status, first.Raw)
	}
	// A replay that fails PKCE revokes nothing: knowing the code is not enough.
	if r := e.Exchange(c, code, "code_verifier", strings.Repeat("w", 43)); r.Status != 400 || r.Body["error"] != "invalid_grant" {
		t.Errorf("replay with a wrong verifier: %d %s", r.Status, r.Raw)
	}
	if s := e.MCPStatus(servertest.Str(first.Body, "access_token")); s != http.StatusOK {
		t.Errorf("first access token after an invalid replay: %d, want 200", s)
	}
	if r := e.Exchange(c, code); r.Status != 400 || r.Body["error"] != "invalid_grant" {
		t.Errorf("replay: %d %s", r.Status, r.Raw)
	}
	if s := e.MCPStatus(servertest.Str(first.Body, "access_token")); s != http.StatusUnauthorized {
		t.Errorf("first access token after replay: %d, want 401", s)
	}
	if r := e.Refresh(c, servertest.Str(first.Body, "refresh_token")); r.Status != 400 || r.Body["error"] != "invalid_grant" {
		t.Errorf("first refresh token after replay: %d %s", r.Status, r.Raw)
	}
}

// TestOA08TwentyConcurrentRedemptions: exactly one 200, 19 invalid_grant,
// one token family, no 5xx.
func TestOA08TwentyConcurrentRedemptions(t *testing.T) {
	t.Parallel()
	e, _ := servertest.NewOAuth(t)
	tn := e.NewTenant("o", "r")
	c := e.Register("https://client.example/cb")
	code := e.Flow(t, tn, c, "", "memory:read")
	statuses := make([]int, 20)
	errs := make([]any, 20)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range statuses {
		wg.Go(func() {
			<-start
			r := e.Exchange(c, code)
			statuses[i], errs[i] = r.Status, r.Body["error"]
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
	if n := e.QueryString(`SELECT count(DISTINCT family_id)::text FROM oauth_tokens`); n != "1" {
		t.Errorf("%s token families, want 1", n)
	}
	// The losers presented the code with valid parameters: replays, so the
	// winner's tokens are revoked too (docs/oauth.md).
	if n := e.QueryString(`SELECT count(*)::text FROM oauth_tokens WHERE revoked_at IS NULL`); n != "0" {
		t.Errorf("%s live tokens after 19 replays, want 0", n)
	}
}

// TestOA09CodeBindings: client, redirect URI, resource and lifetime.
func TestOA09CodeBindings(t *testing.T) {
	t.Parallel()
	e, clock := servertest.NewOAuth(t)
	tn := e.NewTenant("o", "r")
	a := e.Register("https://a.example/cb")
	b := e.Register("https://b.example/cb")
	bWithA := b
	bWithA.Verifier = a.Verifier
	for name, tc := range map[string]struct {
		redeem func(code string) servertest.Reply
		err    string
	}{
		"other client": {func(code string) servertest.Reply { return e.Exchange(bWithA, code, "redirect_uri", a.Redirect) }, "invalid_grant"},
		"other redirect": {func(code string) servertest.Reply {
			return e.Exchange(a, code, "redirect_uri", "https://a.example/cb2")
		}, "invalid_grant"},
		"foreign resource": {func(code string) servertest.Reply {
			return e.Exchange(a, code, "resource", "https://other.example/mcp")
		}, "invalid_target"},
		"10 min 1 s later": {func(code string) servertest.Reply {
			clock.Advance(10*time.Minute + time.Second)
			return e.Exchange(a, code)
		}, "invalid_grant"},
		"unknown code":      {func(string) servertest.Reply { return e.Exchange(a, oauth.NewSecret(oauth.PrefixCode)) }, "invalid_grant"},
		"access token":      {func(string) servertest.Reply { return e.Exchange(a, oauth.NewSecret(oauth.PrefixAccess)) }, "invalid_grant"},
		"unknown client id": {func(code string) servertest.Reply { return e.Exchange(a, code, "client_id", "nope") }, "invalid_client"},
	} {
		code := e.Flow(t, tn, a, "", "memory:read")
		r := tc.redeem(code)
		if r.Body["error"] != tc.err || r.Status/100 != 4 {
			t.Errorf("%s: %d %s, want %s", name, r.Status, r.Raw, tc.err)
		}
	}
	code := e.Flow(t, tn, a, "", "memory:read")
	clock.Advance(10*time.Minute - time.Second)
	if r := e.Exchange(a, code); r.Status != 200 {
		t.Errorf("at 9 min 59 s: %d %s", r.Status, r.Raw)
	}
}

// TestOA13TokenResponses: JSON, no-store, token_type, expires_in, scope;
// errors are {"error": …} with no internals; the redirect has exactly one
// code, state and iss.
func TestOA13TokenResponses(t *testing.T) {
	t.Parallel()
	e, _ := servertest.NewOAuth(t)
	tn := e.NewTenant("o", "r")
	c := e.Register("https://client.example/cb")
	bw := e.Browser(t)
	bw.SignIn(tn.Principal)
	q := c.AuthorizeQuery("memory:read")
	q.Set("state", "a b&c=d/é")
	p := bw.Approve(bw.Consent(q), tn.Project, "memory:read")
	loc, _ := url.Parse(p.Header.Get("Location"))
	params := loc.Query()
	if len(params["code"]) != 1 || len(params["iss"]) != 1 || len(params["state"]) != 1 ||
		params.Get("state") != "a b&c=d/é" || params.Get("iss") != e.Cfg.PublicURL {
		t.Errorf("authorization response %q", p.Header.Get("Location"))
	}
	ok := e.Exchange(c, params.Get("code"))
	bad := e.Exchange(c, params.Get("code"))
	rt := e.Refresh(c, "hyr_nope")
	for name, r := range map[string]servertest.Reply{"success": ok, "replay": bad, "bad refresh": rt} {
		if r.Header.Get("Cache-Control") != "no-store" || r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%s headers: %v", name, r.Header)
		}
	}
	if ok.Status != 200 || ok.Body["token_type"] != "Bearer" || ok.Body["expires_in"] != float64(3600) ||
		ok.Body["scope"] != "memory:read" || !strings.HasPrefix(servertest.Str(ok.Body, "access_token"), "hya_") ||
		!strings.HasPrefix(servertest.Str(ok.Body, "refresh_token"), "hyr_") {
		t.Errorf("success body %s", ok.Raw)
	}
	for name, r := range map[string]servertest.Reply{"replay": bad, "bad refresh": rt} {
		if r.Status != 400 || len(r.Body) > 2 || r.Body["error"] != "invalid_grant" {
			t.Errorf("%s body %s", name, r.Raw)
		}
	}
	if r := e.PostBody("/oauth/token", "application/json", `{"grant_type":"authorization_code"}`); r.Status != 400 ||
		r.Body["error"] != "invalid_request" || r.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("JSON body: %d %s", r.Status, r.Raw)
	}
	if r := e.PostBody("/oauth/token", "application/x-www-form-urlencoded", "grant_type=refresh_token&grant_type=authorization_code"); r.Status != 400 ||
		r.Body["error"] != "invalid_request" {
		t.Errorf("repeated parameter: %d %s", r.Status, r.Raw)
	}
}

// basicAuth is an HTTP Basic Authorization value as golang.org/x/oauth2 sends it.
func basicAuth(user, pass string) string {
	return "Basic " + servertest.Base64Std(url.QueryEscape(user)+":"+pass)
}

// TestRevokeClientAuthentication: the revocation endpoint authenticates its
// client as the token endpoint does (RFC 7009 §2.1), and its 401 to a client
// that sent an Authorization header names the scheme (RFC 6749 §5.2, which
// RFC 7009 §2.2.1 applies). A refused revocation revokes nothing.
func TestRevokeClientAuthentication(t *testing.T) {
	t.Parallel()
	e, _ := servertest.NewOAuth(t)
	tn := e.NewTenant("o", "r")
	c := e.Register("https://client.example/cb")
	tk := e.Tokens(t, tn, c, "memory:read")
	access := servertest.Str(tk.Body, "access_token")
	body := url.Values{"token": {access}}.Encode()
	if r := e.PostBody("/oauth/revoke", "application/x-www-form-urlencoded", body, "Authorization", basicAuth(c.ID, "secret")); r.Status != 401 ||
		r.Body["error"] != "invalid_client" || r.Header.Get("WWW-Authenticate") != `Basic realm="heyaira"` {
		t.Errorf("Basic with a secret: %d %q %s", r.Status, r.Header.Get("WWW-Authenticate"), r.Raw)
	}
	if s := e.MCPStatus(access); s != http.StatusOK {
		t.Fatalf("after a refused revocation the access token answers %d, want 200", s)
	}
	if r := e.PostBody("/oauth/revoke", "application/x-www-form-urlencoded", body, "Authorization", basicAuth(c.ID, "")); r.Status != 200 {
		t.Errorf("Basic with an empty password: %d %s", r.Status, r.Raw)
	}
	if s := e.MCPStatus(access); s != http.StatusUnauthorized {
		t.Errorf("revoked access token: %d", s)
	}
}

// TestTokenClientAuthentication: public clients authenticate by client_id,
// in the body or as HTTP Basic with an empty password; secrets are refused.
func TestTokenClientAuthentication(t *testing.T) {
	t.Parallel()
	e, _ := servertest.NewOAuth(t)
	tn := e.NewTenant("o", "r")
	c := e.Register("https://client.example/cb")
	code := e.Flow(t, tn, c, "", "memory:read")
	v := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "code_verifier": {c.Verifier}, "redirect_uri": {c.Redirect}}
	if r := e.PostBody("/oauth/token", "application/x-www-form-urlencoded", v.Encode(), "Authorization", basicAuth(c.ID, "secret")); r.Status != 401 ||
		r.Body["error"] != "invalid_client" || r.Header.Get("WWW-Authenticate") == "" {
		t.Errorf("Basic with a secret: %d %s", r.Status, r.Raw)
	}
	if r := e.PostBody("/oauth/token", "application/x-www-form-urlencoded", v.Encode()); r.Status != 401 || r.Body["error"] != "invalid_client" {
		t.Errorf("no client: %d %s", r.Status, r.Raw)
	}
	if r := e.PostBody("/oauth/token", "application/x-www-form-urlencoded", v.Encode(), "Authorization", basicAuth(c.ID, "")); r.Status != 200 {
		t.Errorf("Basic with an empty password: %d %s", r.Status, r.Raw)
	}
}
