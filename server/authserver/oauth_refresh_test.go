package authserver_test

import (
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	"heyaira/oauth"
	"heyaira/server/internal/servertest"
)

// TestOA10RefreshReuseRevokesFamily: RT0 → RT1; replaying RT0 is refused and
// revokes RT1 and its access token; one audit event.
func TestOA10RefreshReuseRevokesFamily(t *testing.T) {
	t.Parallel()
	e, _ := servertest.NewOAuth(t)
	tn := e.NewTenant("o", "r")
	c := e.Register("https://client.example/cb")
	t0 := e.Tokens(t, tn, c, "memory:read")
	t1 := e.Refresh(c, servertest.Str(t0.Body, "refresh_token"))
	if t1.Status != 200 {
		t.Fatalf("refresh: %d %s", t1.Status, t1.Raw)
	}
	if r := e.Refresh(c, servertest.Str(t0.Body, "refresh_token")); r.Status != 400 || r.Body["error"] != "invalid_grant" {
		t.Errorf("RT0 replay: %d %s", r.Status, r.Raw)
	}
	if r := e.Refresh(c, servertest.Str(t1.Body, "refresh_token")); r.Status != 400 || r.Body["error"] != "invalid_grant" {
		t.Errorf("RT1 after the replay: %d %s", r.Status, r.Raw)
	}
	if s := e.MCPStatus(servertest.Str(t1.Body, "access_token")); s != http.StatusUnauthorized {
		t.Errorf("access token paired with RT1: %d, want 401", s)
	}
	if n := e.QueryString(`SELECT count(*)::text FROM audit_events WHERE action = 'oauth_refresh.reuse'`); n != "1" {
		t.Errorf("%s reuse audit events, want 1", n)
	}
}

// TestOA11ConcurrentRefreshes: of 2, then 10, concurrent refreshes of one
// token exactly one succeeds, and no two live refresh tokens descend from it.
func TestOA11ConcurrentRefreshes(t *testing.T) {
	t.Parallel()
	e, _ := servertest.NewOAuth(t)
	tn := e.NewTenant("o", "r")
	c := e.Register("https://client.example/cb")
	for _, n := range []int{2, 10} {
		rt := servertest.Str(e.Tokens(t, tn, c, "memory:read").Body, "refresh_token")
		statuses := make([]int, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range statuses {
			wg.Go(func() {
				<-start
				statuses[i] = e.Refresh(c, rt).Status
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
		live := e.QueryString(`SELECT count(*)::text FROM oauth_tokens t JOIN oauth_tokens p ON p.family_id = t.family_id
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
	e, clock := servertest.NewOAuth(t)
	tn := e.NewTenant("o", "r")
	a := e.Register("https://a.example/cb")
	b := e.Register("https://b.example/cb")
	ta := e.Tokens(t, tn, a, "memory:read")
	rt := servertest.Str(ta.Body, "refresh_token")
	if r := e.Refresh(b, rt); r.Status != 400 || r.Body["error"] != "invalid_grant" {
		t.Errorf("(a) B presents A's refresh token: %d %s", r.Status, r.Raw)
	}
	// (d) B revokes A's token: 200, nothing revoked.
	if r := e.Form("/oauth/revoke", url.Values{"token": {rt}, "client_id": {b.ID}}); r.Status != 200 {
		t.Errorf("(d) revoke by another client: %d %s", r.Status, r.Raw)
	}
	// (b) the family lives 30 days from the code, however often it rotates.
	clock.Advance(29 * 24 * time.Hour)
	r := e.Refresh(a, rt)
	if r.Status != 200 {
		t.Fatalf("refresh on day 29: %d %s", r.Status, r.Raw)
	}
	// A second past the 30 days: the clock stands still between requests,
	// so exactly 30 days would be the boundary itself.
	clock.Advance(24*time.Hour + time.Second)
	if r := e.Refresh(a, servertest.Str(r.Body, "refresh_token")); r.Status != 400 || r.Body["error"] != "invalid_grant" {
		t.Errorf("(b) refresh on day 30: %d %s", r.Status, r.Raw)
	}
	// (c) revoke, then refresh.
	tc := e.Tokens(t, tn, a, "memory:read")
	for _, tok := range []string{"hyr_unknown", servertest.Str(tc.Body, "refresh_token")} {
		if r := e.Form("/oauth/revoke", url.Values{"token": {tok}, "client_id": {a.ID}, "token_type_hint": {"refresh_token"}}); r.Status != 200 ||
			r.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("revoke %.8s: %d %s", tok, r.Status, r.Raw)
		}
	}
	if r := e.Refresh(a, servertest.Str(tc.Body, "refresh_token")); r.Status != 400 || r.Body["error"] != "invalid_grant" {
		t.Errorf("(c) refresh after revocation: %d %s", r.Status, r.Raw)
	}
	if s := e.MCPStatus(servertest.Str(tc.Body, "access_token")); s != http.StatusUnauthorized {
		t.Errorf("access token of a revoked family: %d", s)
	}
	if r := e.Form("/oauth/revoke", url.Values{"client_id": {a.ID}}); r.Status != 400 || r.Body["error"] != "invalid_request" {
		t.Errorf("revoke without token: %d %s", r.Status, r.Raw)
	}
	if r := e.Form("/oauth/revoke", url.Values{"token": {"x"}, "client_id": {"nope"}}); r.Status != 401 || r.Body["error"] != "invalid_client" {
		t.Errorf("revoke by unknown client: %d %s", r.Status, r.Raw)
	}
}

// TestOA12AccessTokenRevocation: revoking an access token (RFC 7009) ends it
// at /mcp and leaves its refresh token working.
func TestOA12AccessTokenRevocation(t *testing.T) {
	t.Parallel()
	e, _ := servertest.NewOAuth(t)
	tn := e.NewTenant("o", "r")
	c := e.Register("https://client.example/cb")
	tk := e.Tokens(t, tn, c, "memory:read")
	if r := e.Form("/oauth/revoke", url.Values{"token": {servertest.Str(tk.Body, "access_token")}, "client_id": {c.ID}}); r.Status != 200 {
		t.Fatalf("revoke: %d %s", r.Status, r.Raw)
	}
	if s := e.MCPStatus(servertest.Str(tk.Body, "access_token")); s != http.StatusUnauthorized {
		t.Errorf("revoked access token: %d", s)
	}
	if r := e.Refresh(c, servertest.Str(tk.Body, "refresh_token")); r.Status != 200 {
		t.Errorf("refresh after revoking only the access token: %d %s", r.Status, r.Raw)
	}
}

// TestRefreshNeedsRegisteredGrantType: a client that registered only
// authorization_code gets no refresh token.
func TestRefreshNeedsRegisteredGrantType(t *testing.T) {
	t.Parallel()
	e, _ := servertest.NewOAuth(t)
	tn := e.NewTenant("o", "r")
	r := e.PostJSON("/oauth/register", map[string]any{"redirect_uris": []string{"https://c.example/cb"},
		"grant_types": []string{"authorization_code"}})
	c := servertest.Client{ID: servertest.Str(r.Body, "client_id"), Redirect: "https://c.example/cb", Verifier: servertest.RandomB64()}
	tk := e.Exchange(c, e.Flow(t, tn, c, "", "memory:read"))
	if tk.Status != 200 || tk.Body["refresh_token"] != nil {
		t.Errorf("token response %s", tk.Raw)
	}
	if r := e.Refresh(c, e.Secrets.Mint(oauth.PrefixRefresh, time.Time{})); r.Body["error"] != "unauthorized_client" {
		t.Errorf("refresh: %d %s", r.Status, r.Raw)
	}
}
