package app

import (
	"context"
	"log/slog"
	"time"

	"heyaira/store"
)

// The janitor deletes expired credentials (store.PurgeExpired): at start,
// then once an hour, those whose expiry is more than 90 days old (see
// store/purge.go for why so long). In the same runs it deletes the
// registered clients never authorized within a day of registering
// (store.PurgeUnusedClients).
const (
	purgeEvery       = time.Hour
	purgeKeep        = 90 * 24 * time.Hour
	unusedClientKeep = 24 * time.Hour
)

// janitor calls round at once, then every `every`, until ctx ends. The
// schedule is apart from the database work so that a test can run it on a
// fake clock (testing/synctest) and the rounds on a real database.
func janitor(ctx context.Context, every time.Duration, round func(ctx context.Context, now time.Time)) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		round(ctx, time.Now())
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// purgeRound is one janitor round: what expired before now − keep, then the
// unused clients. It logs counts only (no hashes, no ids); a failure is
// logged and tried again at the next round, `every` later.
func purgeRound(db *store.DB, logger *slog.Logger, every, keep time.Duration) func(context.Context, time.Time) {
	return func(ctx context.Context, now time.Time) {
		c, err := db.PurgeExpired(ctx, now.Add(-keep))
		switch {
		case err != nil && ctx.Err() == nil:
			logger.Warn("purging expired credentials failed", "err", err, "next_try", every.String())
		case c.Total() > 0:
			logger.Info("purged expired credentials", "requests", c.Requests, "codes", c.Codes,
				"tokens", c.Tokens, "signin_links", c.SigninLinks, "sessions", c.Sessions)
		}
		n, err := db.PurgeUnusedClients(ctx, now.Add(-unusedClientKeep))
		switch {
		case err != nil && ctx.Err() == nil:
			logger.Warn("purging unused clients failed", "err", err, "next_try", every.String())
		case n > 0:
			logger.Info("purged unused clients", "clients", n)
		}
	}
}
