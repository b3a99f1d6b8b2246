package store_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"heyaira/store"

	"github.com/google/go-cmp/cmp"
	"github.com/lib/pq"
)

func rotate(t *testing.T, tr tree, c store.Client, rt, next string, at time.Time, scopes []string) (store.Issued, error) {
	t.Helper()
	return tr.db.RotateRefresh(t.Context(), store.Rotation{RefreshHash: h(rt), ClientID: c.ID, Scopes: scopes, Now: at,
		Tokens: store.NewTokens{AccessHash: h("at-" + next), AccessTTL: time.Hour, RefreshHash: h(next)}})
}

// issueFamily approves and redeems a code whose refresh token hashes from "rt0".
func issueFamily(t *testing.T, tr tree, c store.Client, scopes []string) store.Issued {
	t.Helper()
	approve(t, tr, c, "f", scopes, scopes)
	iss, err := tr.db.RedeemCode(t.Context(), store.CodeRedemption{CodeHash: h("codef"), ClientID: c.ID, Now: t0,
		Tokens: store.NewTokens{AccessHash: h("at0"), AccessTTL: time.Hour, RefreshHash: h("rt0"), RefreshTTL: 30 * 24 * time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	return iss
}

func liveByHash(t *testing.T, tr tree, names ...string) []bool {
	t.Helper()
	out := make([]bool, len(names))
	for i, n := range names {
		mustQuery(t, tr.db, `SELECT revoked_at IS NULL FROM oauth_tokens WHERE token_hash = $1`, &out[i], h(n))
	}
	return out
}

// TestOA10RefreshReuseRevokesFamily: RT0 → RT1; replaying RT0 revokes RT1
// and its access token too.
func TestOA10RefreshReuseRevokesFamily(t *testing.T) {
	t.Parallel()
	tr, c := oauthTree(t)
	first := issueFamily(t, tr, c, []string{"memory:read", "tasks:read"})
	iss, err := rotate(t, tr, c, "rt0", "rt1", t0.Add(time.Minute), nil)
	if err != nil || iss.FamilyID != first.FamilyID {
		t.Fatalf("rotate = %+v, %v", iss, err)
	}
	if _, err := rotate(t, tr, c, "rt0", "rt2", t0.Add(2*time.Minute), nil); !errors.Is(err, store.ErrInvalidGrant) {
		t.Fatalf("reuse = %v, want ErrInvalidGrant", err)
	}
	if diff := cmp.Diff([]bool{false, false, false, false}, liveByHash(t, tr, "at0", "rt0", "at-rt1", "rt1")); diff != "" {
		t.Errorf("live after reuse (-want +got):\n%s", diff)
	}
	if _, err := rotate(t, tr, c, "rt1", "rt3", t0.Add(3*time.Minute), nil); !errors.Is(err, store.ErrInvalidGrant) {
		t.Errorf("RT1 after reuse = %v, want ErrInvalidGrant", err)
	}
	var audits int
	mustQuery(t, tr.db, `SELECT count(*) FROM audit_events WHERE action = 'oauth_refresh.reuse'`, &audits)
	if audits != 1 {
		t.Errorf("%d reuse audit rows, want 1", audits)
	}
}

// TestAZ04RefreshNeverAddsScope: narrowing works; widening is refused and
// changes nothing.
func TestAZ04RefreshNeverAddsScope(t *testing.T) {
	t.Parallel()
	tr, c := oauthTree(t)
	issueFamily(t, tr, c, []string{"memory:read", "tasks:read"})
	if _, err := rotate(t, tr, c, "rt0", "x", t0, []string{"memory:read", "documents:read"}); !errors.Is(err, store.ErrScopeExceeded) {
		t.Fatalf("widening = %v, want ErrScopeExceeded", err)
	}
	iss, err := rotate(t, tr, c, "rt0", "rt1", t0, []string{"tasks:read"})
	if err != nil {
		t.Fatalf("old token no longer valid after refused widening: %v", err)
	}
	if diff := cmp.Diff([]string{"tasks:read"}, iss.Scopes); diff != "" {
		t.Errorf("narrowed access scopes (-want +got):\n%s", diff)
	}
	var rtScopes []string
	mustQuery(t, tr.db, `SELECT scopes FROM oauth_tokens WHERE token_hash = $1`, pq.Array(&rtScopes), h("rt1"))
	if diff := cmp.Diff([]string{"memory:read", "tasks:read"}, rtScopes); diff != "" {
		t.Errorf("new refresh token scopes (-want +got):\n%s", diff)
	}
}

// TestOA12RefreshBindings: another client, expiry (the family's absolute
// lifetime, inherited on rotation) and revocation.
func TestOA12RefreshBindings(t *testing.T) {
	t.Parallel()
	tr, c := oauthTree(t)
	other, err := tr.db.RegisterClient(t.Context(), "B", []string{"https://b.example/cb"}, []string{"authorization_code", "refresh_token"})
	if err != nil {
		t.Fatal(err)
	}
	issueFamily(t, tr, c, []string{"memory:read"})
	if _, err := rotate(t, tr, other, "rt0", "x", t0, nil); !errors.Is(err, store.ErrInvalidGrant) {
		t.Errorf("other client = %v, want ErrInvalidGrant", err)
	}
	// Not a reuse: the owner can still rotate.
	if _, err := rotate(t, tr, c, "rt0", "rt1", t0.Add(29*24*time.Hour), nil); err != nil {
		t.Fatalf("owner after foreign attempt: %v", err)
	}
	// RT1 inherited RT0's expiry: 30 days after the code, not after RT1.
	if _, err := rotate(t, tr, c, "rt1", "rt2", t0.Add(30*24*time.Hour), nil); !errors.Is(err, store.ErrInvalidGrant) {
		t.Errorf("past family lifetime = %v, want ErrInvalidGrant", err)
	}
	// Revocation by a foreign client does nothing; by the owner, the family goes.
	if done, err := tr.db.RevokeClientToken(t.Context(), h("rt1"), other.ID, t0); done || err != nil {
		t.Errorf("foreign revoke = %v, %v; want false, nil", done, err)
	}
	if done, err := tr.db.RevokeClientToken(t.Context(), h("rt1"), c.ID, t0); !done || err != nil {
		t.Errorf("revoke = %v, %v; want true, nil", done, err)
	}
	if diff := cmp.Diff([]bool{false, false}, liveByHash(t, tr, "rt1", "at-rt1")); diff != "" {
		t.Errorf("live after revoking refresh (-want +got):\n%s", diff)
	}
	if done, err := tr.db.RevokeClientToken(t.Context(), h("unknown"), c.ID, t0); done || err != nil {
		t.Errorf("unknown revoke = %v, %v", done, err)
	}
}

// TestOA11ConcurrentRefreshes: of 10 concurrent rotations of one token,
// exactly one succeeds, and never two live refresh tokens descend from it.
func TestOA11ConcurrentRefreshes(t *testing.T) {
	t.Parallel()
	tr, c := oauthTree(t)
	issueFamily(t, tr, c, []string{"memory:read"})
	errs := make([]error, 10)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range errs {
		wg.Go(func() {
			<-start
			_, errs[i] = rotate(t, tr, c, "rt0", fmt.Sprint("n", i), t0, nil)
		})
	}
	close(start)
	wg.Wait()
	ok := 0
	for _, err := range errs {
		if err == nil {
			ok++
		} else if !errors.Is(err, store.ErrInvalidGrant) {
			t.Errorf("unexpected error %v", err)
		}
	}
	if ok != 1 {
		t.Errorf("%d successes, want 1", ok)
	}
	var live int
	mustQuery(t, tr.db, `SELECT count(*) FROM oauth_tokens WHERE kind = 'refresh' AND revoked_at IS NULL`, &live)
	if live > 1 {
		t.Errorf("%d live refresh tokens, want at most 1", live)
	}
}

// TestRotateRefreshRefusesAccessToken: an access token is not a refresh token (CR-03).
// Row CR-03 (docs/security-tests.md).
func TestRotateRefreshRefusesAccessToken(t *testing.T) {
	t.Parallel()
	tr, c := oauthTree(t)
	issueFamily(t, tr, c, []string{"memory:read"})
	if _, err := rotate(t, tr, c, "at0", "x", t0, nil); !errors.Is(err, store.ErrInvalidGrant) {
		t.Errorf("access token as refresh = %v, want ErrInvalidGrant", err)
	}
}

// A refresh and a code redemption take the membership's and the grant's
// locks before the token's, in offboarding's order. An offboarding
// transaction makes its first change (remove-member deletes the membership;
// disable-principal and revoke-grant revoke the grant), the refresh or
// redemption then waits for it, and the offboarding goes on to its other
// changes and commits; the waiter is then refused. Before, the refresh held
// its token, and both held the grant, while they waited, so the
// offboarding's next change waited for them and PostgreSQL aborted one of
// the two (deadlock detected, 40P01): an administrator's command failed at
// random beside a client's hourly refresh.
func TestRefreshLocksGrantBeforeToken(t *testing.T) {
	t.Parallel()
	const (
		deleteMember = `DELETE FROM project_members WHERE principal_id = $1`
		revokeGrants = `UPDATE oauth_grants SET revoked_at = now() WHERE principal_id = $1 AND revoked_at IS NULL`
		revokeTokens = `UPDATE oauth_tokens SET revoked_at = now()
			WHERE revoked_at IS NULL AND grant_id IN (SELECT id FROM oauth_grants WHERE principal_id = $1)`
	)
	for _, tc := range []struct {
		name     string
		offboard []string // the offboarding's statements; the waiter starts after the first
		waiter   string   // "refresh", "redeem" a code, or the client's "revoke" (RFC 7009)
	}{
		{"disable-principal, refresh", []string{revokeGrants, revokeTokens}, "refresh"},
		{"remove-member, refresh", []string{deleteMember, revokeGrants, revokeTokens}, "refresh"},
		{"remove-member, redeem", []string{deleteMember, revokeGrants, revokeTokens}, "redeem"},
		{"disable-principal, client revocation", []string{revokeGrants, revokeTokens}, "revoke"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tr, c := oauthTree(t)
			ctx := t.Context()
			scopes := []string{"memory:read"}
			approve(t, tr, c, "lock", scopes, scopes)
			if _, err := redeem(t, tr, c, "lock", t0); err != nil {
				t.Fatal(err)
			}
			approve(t, tr, c, "later", scopes, scopes)
			admin, err := tr.db.SQL().BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer admin.Rollback()
			var xid string
			if err := admin.QueryRowContext(ctx, tc.offboard[0]+` RETURNING xid(pg_current_xact_id())::text`,
				tr.principal.ID).Scan(&xid); err != nil {
				t.Fatal(err)
			}
			waited := make(chan error, 1)
			go func() {
				var err error
				switch tc.waiter {
				case "redeem":
					_, err = redeem(t, tr, c, "later", t0.Add(time.Minute))
				case "refresh":
					_, err = rotate(t, tr, c, "rtlock"+t0.String(), "rt-after", t0.Add(time.Minute), nil)
				case "revoke":
					var revoked bool
					if revoked, err = tr.db.RevokeClientToken(ctx, h("rtlock"+t0.String()), c.ID, t0); err == nil && revoked {
						err = errors.New("revoked a token the offboarding had revoked")
					}
				}
				waited <- err
			}()
			// Until the waiter waits for the offboarding's transaction (counted,
			// not timed; the deadline only ends a test that would otherwise hang).
			for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				var waiting bool
				mustQuery(t, tr.db, `SELECT EXISTS (SELECT 1 FROM pg_locks WHERE NOT granted
					AND locktype = 'transactionid' AND transactionid::text = $1)`, &waiting, xid)
				if waiting {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the refresh or redemption never waited for the offboarding")
				}
			}
			for _, q := range tc.offboard[1:] {
				if _, err := admin.ExecContext(ctx, q, tr.principal.ID); err != nil {
					t.Fatalf("the offboarding beside a waiting %s: %v", tc.name, err)
				}
			}
			if err := admin.Commit(); err != nil {
				t.Fatalf("the offboarding's commit: %v", err)
			}
			switch err := <-waited; {
			case tc.waiter == "revoke" && err != nil:
				t.Errorf("the client's revocation after the offboarding: %v, want nothing left to revoke", err)
			case tc.waiter != "revoke" && !errors.Is(err, store.ErrInvalidGrant):
				t.Errorf("after the offboarding: %v, want invalid_grant", err)
			}
		})
	}
}
