package main

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
// (store.PurgeUnusedClients). It runs until ctx ends.
const (
	purgeEvery       = time.Hour
	purgeKeep        = 90 * 24 * time.Hour
	unusedClientKeep = 24 * time.Hour
)

func janitor(ctx context.Context, db *store.DB, logger *slog.Logger, every, keep time.Duration, now func() time.Time) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		c, err := db.PurgeExpired(ctx, now().Add(-keep))
		switch {
		case err != nil && ctx.Err() == nil:
			logger.Warn("purging expired credentials failed", "err", err, "next_try", every.String())
		case c.Total() > 0:
			logger.Info("purged expired credentials", "requests", c.Requests, "codes", c.Codes,
				"tokens", c.Tokens, "signin_links", c.SigninLinks, "sessions", c.Sessions)
		}
		purgeClients(ctx, db, logger, every, now())
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func purgeClients(ctx context.Context, db *store.DB, logger *slog.Logger, every time.Duration, now time.Time) {
	n, err := db.PurgeUnusedClients(ctx, now.Add(-unusedClientKeep))
	switch {
	case err != nil && ctx.Err() == nil:
		logger.Warn("purging unused clients failed", "err", err, "next_try", every.String())
	case n > 0:
		logger.Info("purged unused clients", "clients", n)
	}
}
