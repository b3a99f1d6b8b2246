package store

import "context"

// issuedSecretSQL tells whether a secret's SHA-256 names anything the server
// issued: an OAuth access or refresh token, an authorization code or a
// legacy token, live or not. Every secret carries its kind's prefix, so a
// hash can only ever match the row of the secret it came from.
const issuedSecretSQL = `
	SELECT EXISTS (SELECT 1 FROM oauth_tokens WHERE token_hash = $1)
	    OR EXISTS (SELECT 1 FROM oauth_codes WHERE code_hash = $1)
	    OR EXISTS (SELECT 1 FROM legacy_tokens WHERE token_hash = $1)`

// IssuedSecret reports whether hash is the SHA-256 of a secret the server
// issued, whatever its state: expired, revoked, used or live. The server's
// refusal limits use it to tell a holder's stale credential, which costs no
// one else anything, from a made-up one (server/refusals.go). Rows the
// janitor has purged are no longer known.
func (db *DB) IssuedSecret(ctx context.Context, hash []byte) (bool, error) {
	var known bool
	err := db.scanPrepared(ctx, "issued secret", []any{&known}, issuedSecretSQL, hash)
	return known, err
}
