package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"heyaira/store"
)

// serve may start before PostgreSQL answers (a host boot, a database
// restart, containers started together), so it waits: from dbWaitFirst,
// doubling up to dbWaitMax, one log line per attempt. Only "cannot reach it"
// (store.ErrUnavailable) is waited for; a database that answers and refuses
// (a wrong password, no such database or role, an unmigrated schema, an
// invalid URL) fails at once: waiting would not fix it.
const (
	dbWaitFirst = 500 * time.Millisecond
	dbWaitMax   = 10 * time.Second
	// dbWaitEnv bounds the whole wait, in seconds; 0 (the default) waits until
	// the database answers or serve is stopped, as a running server does when
	// its database goes away.
	dbWaitEnv = "HEYAIRA_DB_WAIT_SECONDS"
)

// errStoppedWaiting: serve was stopped (SIGTERM) while it waited; it exits 0.
var errStoppedWaiting = errors.New("stopped while waiting for the database")

// openStore opens and checks the database, waiting up to limit (0: no
// limit). The log lines carry the error, which names the address and what
// failed, never the URL (it may hold a password).
func openStore(ctx context.Context, dsn string, limit time.Duration, logger *slog.Logger) (*store.DB, error) {
	start := time.Now()
	delay := dbWaitFirst
	for attempt := 1; ; attempt++ {
		db, err := store.Open(ctx, dsn)
		if err == nil {
			if err = db.CheckSchema(ctx); err == nil {
				if attempt > 1 {
					logger.Info("database answers", "attempts", attempt, "waited", time.Since(start).Round(time.Millisecond).String())
				}
				return db, nil
			}
			db.Close()
		}
		if ctx.Err() != nil {
			return nil, errStoppedWaiting
		}
		if errors.Is(err, store.ErrSchemaMissing) {
			return nil, errors.New("database schema is missing: run `heyaira-admin migrate` first")
		}
		if !errors.Is(err, store.ErrUnavailable) {
			return nil, fmt.Errorf("database: %w", err) // it answered and refused: waiting will not help
		}
		wait := delay
		if limit > 0 {
			left := limit - time.Since(start)
			if left <= 0 {
				return nil, fmt.Errorf("database: still unreachable after %s (%s=%d): %w",
					time.Since(start).Round(time.Second), dbWaitEnv, int(limit/time.Second), err)
			}
			wait = min(wait, left)
		}
		logger.Warn("database unreachable; waiting before trying again", "attempt", attempt,
			"retry_in", wait.String(), "error_class", "unavailable", "error", err.Error())
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			logger.Info("stopped while waiting for the database", "attempts", attempt)
			return nil, errStoppedWaiting
		case <-t.C:
		}
		delay = min(delay*2, dbWaitMax)
	}
}
