package main

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"heyaira/store/storetest"
)

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
	var logs syncBuffer
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
