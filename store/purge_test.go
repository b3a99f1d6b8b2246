package store_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"heyaira/store"
)

// TestPurgeExpired: each table loses exactly its rows that expired before
// the cut-off; a code stays while a token names it; what a refresh token
// replayed after the purge meets is an unknown token.
func TestPurgeExpired(t *testing.T) {
	t.Parallel()
	tr, c := oauthTree(t)
	ctx := t.Context()
	// Request and code expire at t0+10m, access tokens at t0+1h and t0+1h1m,
	// the refresh family at t0+30d.
	issueFamily(t, tr, c, []string{"memory:read"})
	if _, err := rotate(t, tr, c, "rt0", "rt1", t0.Add(time.Minute), nil); err != nil {
		t.Fatal(err)
	}
	count := func(table string) int {
		var n int
		mustQuery(t, tr.db, `SELECT count(*) FROM `+table, &n)
		return n
	}
	tables := []string{"oauth_requests", "oauth_codes", "oauth_tokens", "signin_links", "browser_sessions"}
	counts := func() []int {
		out := make([]int, len(tables))
		for i, table := range tables {
			out[i] = count(table)
		}
		return out
	}
	if diff := cmp.Diff([]int{1, 1, 4, 0, 0}, counts()); diff != "" {
		t.Fatalf("rows before (-want +got):\n%s", diff)
	}

	// Nothing has expired before t0.
	if got, err := tr.db.PurgeExpired(ctx, t0); err != nil || got.Total() != 0 {
		t.Fatalf("purge before t0 = %+v, %v", got, err)
	}
	// Two hours on: the request and both access tokens go; the code stays,
	// because the refresh tokens name it.
	got, err := tr.db.PurgeExpired(ctx, t0.Add(2*time.Hour))
	if err != nil || got != (store.PurgeCounts{Requests: 1, Tokens: 2}) {
		t.Fatalf("purge at t0+2h = %+v, %v", got, err)
	}
	if diff := cmp.Diff([]bool{true, true}, liveByHash(t, tr, "rt0", "rt1")); diff != "" {
		t.Fatalf("refresh tokens after the first purge (-want +got):\n%s", diff)
	}
	// Past the family's end: the refresh tokens go, then the code.
	got, err = tr.db.PurgeExpired(ctx, t0.Add(31*24*time.Hour))
	if err != nil || got != (store.PurgeCounts{Codes: 1, Tokens: 2}) {
		t.Fatalf("purge at t0+31d = %+v, %v", got, err)
	}
	if diff := cmp.Diff([]int{0, 0, 0, 0, 0}, counts()); diff != "" {
		t.Fatalf("rows after (-want +got):\n%s", diff)
	}
	if _, err := rotate(t, tr, c, "rt1", "rt9", t0.Add(32*24*time.Hour), nil); !errors.Is(err, store.ErrInvalidGrant) {
		t.Errorf("a purged refresh token = %v, want ErrInvalidGrant", err)
	}

	// Sign-in links and sessions expire by the database clock.
	if _, err := tr.db.CreateSigninLink(ctx, tr.principal.ID, h("link"), 15*time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.db.CreateSigninLink(ctx, tr.principal.ID, h("unused"), 15*time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.db.RedeemSigninLink(ctx, h("link"), h("sess"), nil); err != nil {
		t.Fatal(err)
	}
	var now time.Time
	mustQuery(t, tr.db, `SELECT now()`, &now)
	if got, err := tr.db.PurgeExpired(ctx, now); err != nil || got.Total() != 0 {
		t.Fatalf("purge of live links and sessions = %+v, %v", got, err)
	}
	got, err = tr.db.PurgeExpired(ctx, now.Add(store.SessionTTL+time.Minute))
	if err != nil || got != (store.PurgeCounts{SigninLinks: 2, Sessions: 1}) {
		t.Fatalf("purge past the session's end = %+v, %v", got, err)
	}
	if _, err := tr.db.Session(ctx, h("sess")); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("purged session = %v, want ErrNotFound", err)
	}
}

// TestPurgeExpiredInBatches: a backlog larger than one batch is purged in
// full, and live rows beside it stay.
func TestPurgeExpiredInBatches(t *testing.T) {
	t.Parallel()
	tr, c := oauthTree(t)
	const expired, live = 12_345, 3
	if _, err := tr.db.SQL().ExecContext(t.Context(), `
		INSERT INTO oauth_requests (handle_hash, client_id, redirect_uri, code_challenge, scopes, resource, expires_at)
		SELECT sha256(i::text::bytea), $1, 'http://127.0.0.1/cb', 'ch', '{}', 'http://x/mcp',
			CASE WHEN i < $2::int THEN $3::timestamptz ELSE $4::timestamptz END
		FROM generate_series(0, $2::int + $5::int - 1) AS i`,
		c.ID, expired, t0.Add(-time.Minute), t0.Add(time.Hour), live); err != nil {
		t.Fatal(err)
	}
	got, err := tr.db.PurgeExpired(t.Context(), t0)
	if err != nil || got != (store.PurgeCounts{Requests: expired}) {
		t.Fatalf("purge = %+v, %v; want %d requests", got, err, expired)
	}
	var left int
	mustQuery(t, tr.db, `SELECT count(*) FROM oauth_requests`, &left)
	if left != live {
		t.Errorf("%d requests left, want the %d live ones", left, live)
	}
}
