package app

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"heyaira/internal/logbuf"
	"heyaira/store"
	"heyaira/store/storetest"
)

// TestJanitorSchedule: the janitor runs a round at start and at every tick,
// each with the time it runs at, and returns when its context ends. On the
// bubble's fake clock: three hours pass in no real time.
// Row BT-37 (docs/security-tests.md).
func TestJanitorSchedule(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, stop := context.WithCancel(t.Context())
		start := time.Now()
		var at []time.Duration
		done := make(chan struct{})
		go func() {
			defer close(done)
			janitor(ctx, purgeEvery, func(_ context.Context, now time.Time) { at = append(at, now.Sub(start)) })
		}()
		time.Sleep(3*purgeEvery + time.Minute)
		synctest.Wait() // the janitor is back in its select
		stop()
		select {
		case <-done:
		case <-time.After(2 * purgeEvery): // the bubble's clock: no real wait
			t.Fatal("the janitor did not return when its context ended")
		}
		if want := []time.Duration{0, purgeEvery, 2 * purgeEvery, 3 * purgeEvery}; !slices.Equal(at, want) {
			t.Errorf("rounds at %v, want %v", at, want)
		}
	})
}

// TestPurgeRound: a round purges what expired before now − keep, logs the
// counts (no hashes, no ids), and keeps the rest for a later round.
func TestPurgeRound(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	ctx := t.Context()
	c, err := db.RegisterClient(ctx, "Janitor test", []string{"http://127.0.0.1/cb"}, []string{"authorization_code"})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	add := func(handle string, expires time.Time) {
		t.Helper()
		if err := db.CreateAuthRequest(ctx, []byte(handle+strings.Repeat("-", 32-len(handle))), store.AuthRequest{
			ClientID: c.ID, RedirectURI: "http://127.0.0.1/cb", CodeChallenge: "ch", Scopes: []string{"memory:read"},
			Resource: "http://x/mcp", ExpiresAt: expires}); err != nil {
			t.Fatal(err)
		}
	}
	count := func() (n int) {
		t.Helper()
		if err := db.SQL().QueryRowContext(ctx, `SELECT count(*) FROM oauth_requests`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	add("old", now.Add(-91*24*time.Hour))    // past the 90 days: purged by the first round
	add("recent", now.Add(-89*24*time.Hour)) // within them: kept
	add("live", now.Add(time.Hour))

	var logs logbuf.Buffer
	round := purgeRound(db, slog.New(slog.NewJSONHandler(&logs, nil)), purgeEvery, purgeKeep)
	round(ctx, now)
	if n := count(); n != 2 {
		t.Fatalf("%d requests left after the first round, want 2", n)
	}
	round(ctx, now.Add(2*24*time.Hour)) // two days on, "recent" is past the 90 days
	if n := count(); n != 1 {
		t.Fatalf("%d requests left after the second round, want 1", n)
	}
	out := logs.String()
	if strings.Count(out, `"msg":"purged expired credentials"`) != 2 || !strings.Contains(out, `"requests":1`) {
		t.Errorf("janitor log:\n%s", out)
	}
	for _, secret := range []string{"old", "recent", c.ID} {
		if strings.Contains(out, secret) {
			t.Errorf("the janitor's log names %q:\n%s", secret, out)
		}
	}
}

// Row BT-37: a janitor round (the first runs at start, TestJanitorSchedule)
// deletes a registered client never authorized within a day of registering,
// logs the count (no ids), and keeps one registered within the day.
func TestBT37JanitorPurgesUnusedClients(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	ctx := t.Context()
	old, err := db.RegisterClient(ctx, "old", []string{"http://127.0.0.1/cb"}, []string{"authorization_code"})
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := db.RegisterClient(ctx, "fresh", []string{"http://127.0.0.1/cb"}, []string{"authorization_code"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.SQL().ExecContext(ctx, `UPDATE oauth_clients SET created_at = now() - interval '25 hours' WHERE id = $1`, old.ID); err != nil {
		t.Fatal(err)
	}
	var logs logbuf.Buffer
	purgeRound(db, slog.New(slog.NewJSONHandler(&logs, nil)), purgeEvery, purgeKeep)(ctx, time.Now())
	if _, err := db.Client(ctx, old.ID); err == nil {
		t.Error("the never-authorized client of yesterday is still there")
	}
	if _, err := db.Client(ctx, fresh.ID); err != nil {
		t.Errorf("today's client: %v", err)
	}
	if out := logs.String(); !strings.Contains(out, `"clients":1`) || strings.Contains(out, old.ID) {
		t.Errorf("janitor log:\n%s", out)
	}
}
