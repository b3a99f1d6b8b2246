package store

import (
	"context"
	"time"
)

// Purging unused clients. Anyone may register a client (dynamic
// registration, RFC 7591), so clients nobody ever authorized would
// accumulate without bound. PurgeUnusedClients deletes the clients
// registered before before that have no grant (no authorization was ever
// completed for them) and no authorization request row. Only a signed-in
// principal can start a request (a bounded number, MaxPendingRequests), so
// an anonymous registration's client goes a day after it was made; one a
// principal started to authorize but never approved goes once its requests
// are purged (PurgeExpired, 90 days after they expired). A client with a
// grant is kept even if the grant was revoked: the grant's rows name it.
// The server calls it hourly with before a day ago (internal/app/janitor.go).

const purgeClientsSQL = `
	DELETE FROM oauth_clients WHERE id IN (
		SELECT c.id FROM oauth_clients c
		WHERE c.created_at < $1
		  AND NOT EXISTS (SELECT 1 FROM oauth_grants g WHERE g.client_id = c.id)
		  AND NOT EXISTS (SELECT 1 FROM oauth_requests r WHERE r.client_id = c.id)
		LIMIT $2 FOR UPDATE SKIP LOCKED)`

// PurgeUnusedClients deletes, in batches of purgeBatch, the clients
// registered before before that were never authorized, and returns how many
// it deleted. On an error it returns what it had deleted so far.
func (db *DB) PurgeUnusedClients(ctx context.Context, before time.Time) (int64, error) {
	n, err := db.purgeAll(ctx, purgeClientsSQL, before)
	return n, wrap("purge unused clients", err)
}
