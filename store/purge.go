package store

import (
	"context"
	"time"
)

// Purging expired credentials. Authorization requests, codes, tokens,
// sign-in links and browser sessions each carry an expiry, after which no
// code path accepts them; without a purge their rows (hashes, never
// secrets) would accumulate for ever. PurgeExpired deletes those whose
// expiry is older than before. This is not revocation, which stays a
// timestamp (docs/design.md §4): only rows nothing can use any more go, and the
// audit rows stay. The server calls it hourly with before 90 days ago
// (internal/app/janitor.go): long enough to attribute a token hash found
// later to its grant, and to recognize, and audit, a replayed refresh token
// as a reuse well after its family ended.

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
// and a code only once no token names it (its reuse revokes them). Each
// deletes one batch ($2 rows) of rows that expired before $1; expires_at is
// indexed in every table (schema.sql).
var purges = []struct {
	table string
	sql   string
	count func(*PurgeCounts) *int64
}{
	{"oauth_requests", purgeSQL("oauth_requests"), func(c *PurgeCounts) *int64 { return &c.Requests }},
	{"oauth_tokens", purgeSQL("oauth_tokens"), func(c *PurgeCounts) *int64 { return &c.Tokens }},
	{"oauth_codes", `DELETE FROM oauth_codes WHERE id IN (
		SELECT c.id FROM oauth_codes c WHERE c.expires_at < $1
		AND NOT EXISTS (SELECT 1 FROM oauth_tokens t WHERE t.code_id = c.id) LIMIT $2)`,
		func(c *PurgeCounts) *int64 { return &c.Codes }},
	{"signin_links", purgeSQL("signin_links"), func(c *PurgeCounts) *int64 { return &c.SigninLinks }},
	{"browser_sessions", purgeSQL("browser_sessions"), func(c *PurgeCounts) *int64 { return &c.Sessions }},
}

// purgeSQL is the purge of a table whose expired rows nothing names.
func purgeSQL(table string) string {
	return `DELETE FROM ` + table + ` WHERE id IN (SELECT id FROM ` + table + ` WHERE expires_at < $1 LIMIT $2)`
}

// PurgeExpired deletes the authorization requests, codes, tokens, sign-in
// links and browser sessions that expired before before, in batches of
// purgeBatch rows. On an error it returns what it had deleted so far.
func (db *DB) PurgeExpired(ctx context.Context, before time.Time) (PurgeCounts, error) {
	var c PurgeCounts
	for _, p := range purges {
		n, err := db.purgeAll(ctx, p.sql, before)
		*p.count(&c) += n
		if err != nil {
			return c, wrap("purge "+p.table, err)
		}
	}
	return c, nil
}

// purgeAll runs the purge statement q, each batch under its own deadline,
// until a batch deletes fewer than purgeBatch rows, and returns how many
// rows it deleted, also on an error.
func (db *DB) purgeAll(ctx context.Context, q string, before time.Time) (int64, error) {
	batch := func() (int64, error) {
		ctx, cancel := context.WithTimeout(ctx, QueryTimeout)
		defer cancel()
		return execCount(ctx, db.sql, q, before, purgeBatch)
	}
	var total int64
	for {
		n, err := batch()
		total += n
		if err != nil || n < purgeBatch {
			return total, err
		}
	}
}
