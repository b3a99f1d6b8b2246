package store

import (
	"context"
	"database/sql"
	"time"
)

// This file creates one-time sign-in links. The store keeps only the SHA-256
// of the link secret; the admin CLI prints the secret once inside the URL. The
// expiry is computed by the database clock, the same clock the redeeming
// server compares it with, so a skewed admin host cannot stretch a link.

// SigninLink is a one-time sign-in link (never its secret or hash).
type SigninLink struct {
	ID          string    `json:"id"`
	PrincipalID string    `json:"principal_id"`
	ExpiresAt   time.Time `json:"expires_at"`
	CreatedAt   time.Time `json:"created_at"`
}

// SigninLinkTTL is how long a sign-in link can be redeemed.
const SigninLinkTTL = 15 * time.Minute

// CreateSigninLink stores the hash of a new sign-in link secret for a
// principal, valid for ttl, and audits it. An unknown principal is a
// *RefusedError (ErrNotFound), a disabled one ErrConflict; a hash that is
// not 32 bytes is ErrInvalid.
func (db *DB) CreateSigninLink(ctx context.Context, principalID string, tokenHash []byte, ttl time.Duration) (SigninLink, error) {
	if len(tokenHash) != 32 {
		return SigninLink{}, refused(ErrInvalid, "sign-in link hash must be 32 bytes")
	}
	if ttl <= 0 {
		return SigninLink{}, refused(ErrInvalid, "sign-in link lifetime must be positive")
	}
	var l SigninLink
	return result(&l, db.inTx(ctx, "create signin link", func(ctx context.Context, tx *sql.Tx) error {
		u, err := lockEnabledPrincipal(ctx, tx, principalID, ErrConflict)
		if err != nil {
			return err
		}
		if err := tx.QueryRowContext(ctx, `INSERT INTO signin_links (token_hash, principal_id, expires_at)
			VALUES ($1, $2, now() + make_interval(secs => $3))
			RETURNING id, principal_id, expires_at, created_at`, tokenHash, principalID, ttl.Seconds()).Scan(
			&l.ID, &l.PrincipalID, &l.ExpiresAt, &l.CreatedAt); err != nil {
			return err
		}
		return insertAudit(ctx, tx, AuditEvent{Actor: ActorAdmin, Action: "signin_link.create",
			AccountID: u.AccountID, Target: l.ID, Outcome: OutcomeOK,
			Details: map[string]any{"principal_id": u.ID, "expires_at": l.ExpiresAt}})
	}))
}
