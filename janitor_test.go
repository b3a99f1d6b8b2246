package main

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"heyaira/internal/logbuf"
	"heyaira/store"
	"heyaira/store/storetest"
)

// TestJanitorPurgesAndStops: the janitor purges at start and at every
// tick what expired before now − keep, logs the counts (no hashes, no
// ids), and returns when its context ends.
func TestJanitorPurgesAndStops(t *testing.T) {
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
	add("old", now.Add(-91*24*time.Hour))    // past the 90 days: purged at start
	add("recent", now.Add(-89*24*time.Hour)) // within them: kept
	add("live", now.Add(time.Hour))

	var logs logbuf.Buffer
	jctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	clock := make(chan time.Time, 1) // the janitor's clock moves when the test sends it a time
	go func() {
		defer close(done)
		current := now
		janitor(jctx, db, slog.New(slog.NewJSONHandler(&logs, nil)), 20*time.Millisecond, purgeKeep, func() time.Time {
			select {
			case current = <-clock:
			default:
			}
			return current
		})
	}()
	waitFor := func(want int) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); count() != want; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%d requests left, want %d", count(), want)
			}
		}
	}
	waitFor(2)
	clock <- now.Add(2 * 24 * time.Hour) // a later tick: "recent" is now past the 90 days
	waitFor(1)
	stop()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		t.Fatal("the janitor did not stop with its context")
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

// Row BT-37: the janitor deletes, at start, a registered client that was
// never authorized within a day of registering, logs the count (no ids), and
// keeps one registered within the day.
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
	jctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		janitor(jctx, db, slog.New(slog.NewJSONHandler(&logs, nil)), time.Hour, purgeKeep, time.Now)
	}()
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(logs.String(), "purged unused clients"); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the janitor logged no client purge:\n%s", logs.String())
		}
	}
	stop()
	<-done
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
