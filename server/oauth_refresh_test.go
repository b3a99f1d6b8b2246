package server

import (
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	"heyaira/oauth"
)

// TestOA10RefreshReuseRevokesFamily: RT0 → RT1; replaying RT0 is refused and
// revokes RT1 and its access token; one audit event.
func TestOA10RefreshReuseRevokesFamily(t *testing.T) {
	t.Parallel()
	e, _ := newOAuthEnv(t)
	tn := e.newTenant("o", "r")
	c := e.register("https://client.example/cb")
	t0 := e.tokens(t, tn, c, "memory:read")
	t1 := e.refresh(c, str(t0.body, "refresh_token"))
	if t1.status != 200 {
		t.Fatalf("refresh: %d %s", t1.status, t1.raw)
	}
	if r := e.refresh(c, str(t0.body, "refresh_token")); r.status != 400 || r.body["error"] != "invalid_grant" {
		t.Errorf("RT0 replay: %d %s", r.status, r.raw)
	}
	if r := e.refresh(c, str(t1.body, "refresh_token")); r.status != 400 || r.body["error"] != "invalid_grant" {
		t.Errorf("RT1 after the replay: %d %s", r.status, r.raw)
	}
	if s := e.mcpStatus(str(t1.body, "access_token")); s != http.StatusUnauthorized {
		t.Errorf("access token paired with RT1: %d, want 401", s)
	}
	if n := e.queryString(`SELECT count(*)::text FROM audit_events WHERE action = 'oauth_refresh.reuse'`); n != "1" {
		t.Errorf("%s reuse audit events, want 1", n)
	}
}

// TestOA11ConcurrentRefreshes: of 2, then 10, concurrent refreshes of one
// token exactly one succeeds, and no two live refresh tokens descend from it.
func TestOA11ConcurrentRefreshes(t *testing.T) {
	t.Parallel()
	e, _ := newOAuthEnv(t)
	tn := e.newTenant("o", "r")
	c := e.register("https://client.example/cb")
	for _, n := range []int{2, 10} {
		rt := str(e.tokens(t, tn, c, "memory:read").body, "refresh_token")
		statuses := make([]int, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range statuses {
			wg.Go(func() {
				<-start
				statuses[i] = e.refresh(c, rt).status
			})
		}
		close(start)
		wg.Wait()
		ok := 0
		for _, s := range statuses {
			if s == 200 {
				ok++
			} else if s != 400 {
				t.Errorf("%d concurrent: status %d", n, s)
			}
		}
		if ok != 1 {
			t.Errorf("%d concurrent refreshes: %d successes, want 1", n, ok)
		}
		live := e.queryString(`SELECT count(*)::text FROM oauth_tokens t JOIN oauth_tokens p ON p.family_id = t.family_id
			WHERE p.token_hash = sha256(convert_to($1::text, 'UTF8')) AND t.kind = 'refresh' AND t.revoked_at IS NULL
			  AND t.used_at IS NULL`, rt)
		if live != "0" && live != "1" {
			t.Errorf("%d concurrent: %s live refresh tokens in the family", n, live)
		}
	}
}

// TestOA12RefreshBindings: another client's refresh token, the family's
// absolute lifetime, revocation, and revocation by another client.
func TestOA12RefreshBindings(t *testing.T) {
	t.Parallel()
	e, clock := newOAuthEnv(t)
	tn := e.newTenant("o", "r")
	a := e.register("https://a.example/cb")
	b := e.register("https://b.example/cb")
	ta := e.tokens(t, tn, a, "memory:read")
	rt := str(ta.body, "refresh_token")
	if r := e.refresh(b, rt); r.status != 400 || r.body["error"] != "invalid_grant" {
		t.Errorf("(a) B presents A's refresh token: %d %s", r.status, r.raw)
	}
	// (d) B revokes A's token: 200, nothing revoked.
	if r := e.form("/oauth/revoke", url.Values{"token": {rt}, "client_id": {b.id}}); r.status != 200 {
		t.Errorf("(d) revoke by another client: %d %s", r.status, r.raw)
	}
	// (b) the family lives 30 days from the code, however often it rotates.
	clock.advance(29 * 24 * time.Hour)
	r := e.refresh(a, rt)
	if r.status != 200 {
		t.Fatalf("refresh on day 29: %d %s", r.status, r.raw)
	}
	// A second past the 30 days: the clock stands still between requests,
	// so exactly 30 days would be the boundary itself.
	clock.advance(24*time.Hour + time.Second)
	if r := e.refresh(a, str(r.body, "refresh_token")); r.status != 400 || r.body["error"] != "invalid_grant" {
		t.Errorf("(b) refresh on day 30: %d %s", r.status, r.raw)
	}
	// (c) revoke, then refresh.
	tc := e.tokens(t, tn, a, "memory:read")
	for _, tok := range []string{"hyr_unknown", str(tc.body, "refresh_token")} {
		if r := e.form("/oauth/revoke", url.Values{"token": {tok}, "client_id": {a.id}, "token_type_hint": {"refresh_token"}}); r.status != 200 ||
			r.header.Get("Cache-Control") != "no-store" {
			t.Errorf("revoke %.8s: %d %s", tok, r.status, r.raw)
		}
	}
	if r := e.refresh(a, str(tc.body, "refresh_token")); r.status != 400 || r.body["error"] != "invalid_grant" {
		t.Errorf("(c) refresh after revocation: %d %s", r.status, r.raw)
	}
	if s := e.mcpStatus(str(tc.body, "access_token")); s != http.StatusUnauthorized {
		t.Errorf("access token of a revoked family: %d", s)
	}
	if r := e.form("/oauth/revoke", url.Values{"client_id": {a.id}}); r.status != 400 || r.body["error"] != "invalid_request" {
		t.Errorf("revoke without token: %d %s", r.status, r.raw)
	}
	if r := e.form("/oauth/revoke", url.Values{"token": {"x"}, "client_id": {"nope"}}); r.status != 401 || r.body["error"] != "invalid_client" {
		t.Errorf("revoke by unknown client: %d %s", r.status, r.raw)
	}
}

// TestOA12AccessTokenRevocation: revoking an access token (RFC 7009) ends it
// at /mcp and leaves its refresh token working.
func TestOA12AccessTokenRevocation(t *testing.T) {
	t.Parallel()
	e, _ := newOAuthEnv(t)
	tn := e.newTenant("o", "r")
	c := e.register("https://client.example/cb")
	tk := e.tokens(t, tn, c, "memory:read")
	if r := e.form("/oauth/revoke", url.Values{"token": {str(tk.body, "access_token")}, "client_id": {c.id}}); r.status != 200 {
		t.Fatalf("revoke: %d %s", r.status, r.raw)
	}
	if s := e.mcpStatus(str(tk.body, "access_token")); s != http.StatusUnauthorized {
		t.Errorf("revoked access token: %d", s)
	}
	if r := e.refresh(c, str(tk.body, "refresh_token")); r.status != 200 {
		t.Errorf("refresh after revoking only the access token: %d %s", r.status, r.raw)
	}
}

// TestRefreshNeedsRegisteredGrantType: a client that registered only
// authorization_code gets no refresh token.
func TestRefreshNeedsRegisteredGrantType(t *testing.T) {
	t.Parallel()
	e, _ := newOAuthEnv(t)
	tn := e.newTenant("o", "r")
	r := e.postJSON("/oauth/register", map[string]any{"redirect_uris": []string{"https://c.example/cb"},
		"grant_types": []string{"authorization_code"}})
	c := client{id: str(r.body, "client_id"), redirect: "https://c.example/cb", verifier: randomB64()}
	tk := e.exchange(c, e.flow(t, tn, c, "", "memory:read"))
	if tk.status != 200 || tk.body["refresh_token"] != nil {
		t.Errorf("token response %s", tk.raw)
	}
	if r := e.refresh(c, e.secrets.Mint(oauth.PrefixRefresh, time.Time{})); r.body["error"] != "unauthorized_client" {
		t.Errorf("refresh: %d %s", r.status, r.raw)
	}
}
