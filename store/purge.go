package store

import (
	"context"
	"time"
)

// Purging expired credentials. Authorization requests, codes, tokens,
// sign-in links and browser sessions each carry an expiry, after which no
// code path accepts them; without a purge their rows (hashes, never
// secrets) would accumulate for ever, and unauthenticated callers can
// create some of them (an authorization request per /oauth/authorize).
// PurgeExpired deletes those whose expiry is older than before. The server
// calls it hourly with before a week ago (janitor.go in package main), so
// a refresh token replayed within a week of its family's end is still
// recognized, and audited, as a reuse.

// PurgeCounts is how many rows PurgeExpired deleted from each table.
type PurgeCounts struct {
	Requests, Codes, Tokens, SigninLinks, Sessions int64
}

// Total is the number of rows deleted.
func (c PurgeCounts) Total() int64 {
	return c.Requests + c.Codes + c.Tokens + c.SigninLinks + c.Sessions
}

// purgeBatch bounds one DELETE, so that a long backlog is worked off in
// statements that each stay well within QueryTimeout.
const purgeBatch = 5000

// purges are the deletions, in order: tokens before the codes they name,
// and a code only once no token names it (its reuse revokes them).
var purges = []struct {
	table string
	sql   string
	count func(*PurgeCounts) *int64
}{
	{"oauth_requests", expiredRows("oauth_requests", ""), func(c *PurgeCounts) *int64 { return &c.Requests }},
	{"oauth_tokens", expiredRows("oauth_tokens", ""), func(c *PurgeCounts) *int64 { return &c.Tokens }},
	{"oauth_codes", expiredRows("oauth_codes", "AND NOT EXISTS (SELECT 1 FROM oauth_tokens t WHERE t.code_id = x.id)"),
		func(c *PurgeCounts) *int64 { return &c.Codes }},
	{"signin_links", expiredRows("signin_links", ""), func(c *PurgeCounts) *int64 { return &c.SigninLinks }},
	{"browser_sessions", expiredRows("browser_sessions", ""), func(c *PurgeCounts) *int64 { return &c.Sessions }},
}

// expiredRows is the DELETE of one batch ($2 rows) of table's rows that
// expired before $1 and meet the extra condition on x, the row.
func expiredRows(table, extra string) string {
	return `DELETE FROM ` + table + ` WHERE id IN (
		SELECT x.id FROM ` + table + ` x WHERE x.expires_at < $1 ` + extra + ` LIMIT $2)`
}

// PurgeExpired deletes the authorization requests, codes, tokens, sign-in
// links and browser sessions that expired before before, in batches of
// purgeBatch rows. On an error it returns what it had deleted so far.
func (db *DB) PurgeExpired(ctx context.Context, before time.Time) (PurgeCounts, error) {
	var c PurgeCounts
	for _, p := range purges {
		for {
			n, err := db.purgeOnce(ctx, p.sql, before)
			*p.count(&c) += n
			if err != nil {
				return c, wrap("purge "+p.table, err)
			}
			if n < purgeBatch {
				break
			}
		}
	}
	return c, nil
}

func (db *DB) purgeOnce(ctx context.Context, q string, before time.Time) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, QueryTimeout)
	defer cancel()
	res, err := db.sql.ExecContext(ctx, q, before, purgeBatch)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
