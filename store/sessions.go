package store

import (
	"context"
	"database/sql"
	"time"
)

// This file redeems one-time sign-in links (made by CreateSigninLink) into
// browser sessions, and looks sessions up. Link and session expiry are
// compared with the database clock, the clock CreateSigninLink used, so a
// skewed server host can neither stretch nor shorten a link.

// Session is a signed-in browser: who, and until when. It never holds the
// session secret or its hash.
type Session struct {
	ID            string
	PrincipalID   string
	PrincipalName string
	AccountID     string
	ExpiresAt     time.Time
}

// SessionTTL is how long a browser session lasts after sign-in.
const SessionTTL = 8 * time.Hour

// redeemLinkSQL uses a link once: the WHERE clause makes a second (or a
// concurrent) redemption match nothing.
const redeemLinkSQL = `
	UPDATE signin_links SET used_at = now()
	WHERE token_hash = $1 AND used_at IS NULL AND revoked_at IS NULL AND expires_at > now()
	RETURNING id, principal_id`

// RedeemSigninLink uses the sign-in link whose secret hashes to linkHash and
// starts a session whose secret hashes to sessionHash, in one transaction.
// oldSessionHash, when not nil, is the browser's previous session cookie: it
// is revoked, so a session id planted before sign-in never becomes an
// authenticated one (no fixation). An unknown, used, expired or revoked
// link, or one of a disabled principal, is a *RefusedError (ErrNotFound),
// and nothing is written.
func (db *DB) RedeemSigninLink(ctx context.Context, linkHash, sessionHash, oldSessionHash []byte) (Session, error) {
	if len(linkHash) != 32 || len(sessionHash) != 32 {
		return Session{}, refused(ErrInvalid, "hashes must be 32 bytes")
	}
	var s Session
	return result(&s, db.inTx(ctx, "redeem signin link", func(ctx context.Context, tx *sql.Tx) error {
		// The principal is locked before the link, the order DisablePrincipal
		// takes them in, so a sign-in racing a disable waits instead of
		// deadlocking, then sees the principal disabled and the link revoked.
		var principalID, linkID string
		err := tx.QueryRowContext(ctx, `SELECT principal_id FROM signin_links WHERE token_hash = $1`, linkHash).Scan(&principalID)
		if err != nil {
			return noRows(err, ErrNotFound, "sign-in link unknown, used or expired")
		}
		u, err := lockEnabledPrincipal(ctx, tx, principalID, ErrNotFound)
		if err != nil {
			return err
		}
		if err := tx.QueryRowContext(ctx, redeemLinkSQL, linkHash).Scan(&linkID, &s.PrincipalID); err != nil {
			return noRows(err, ErrNotFound, "sign-in link unknown, used or expired")
		}
		s.PrincipalName, s.AccountID = u.Name, u.AccountID
		if oldSessionHash != nil {
			if _, err := tx.ExecContext(ctx, `UPDATE browser_sessions SET revoked_at = now()
				WHERE token_hash = $1 AND revoked_at IS NULL`, oldSessionHash); err != nil {
				return err
			}
		}
		if err := tx.QueryRowContext(ctx, `INSERT INTO browser_sessions (token_hash, principal_id, expires_at)
			VALUES ($1, $2, now() + make_interval(secs => $3)) RETURNING id, expires_at`,
			sessionHash, s.PrincipalID, SessionTTL.Seconds()).Scan(&s.ID, &s.ExpiresAt); err != nil {
			return err
		}
		return insertAudit(ctx, tx, AuditEvent{Actor: ActorPrincipal(s.PrincipalID), Action: "signin_link.redeem",
			AccountID: u.AccountID, Target: linkID, Outcome: OutcomeOK,
			Details: map[string]any{"session_id": s.ID}})
	}))
}

const selectSessionSQL = `
	SELECT s.id, s.principal_id, u.name, u.account_id, s.expires_at
	FROM browser_sessions s JOIN principals u ON u.id = s.principal_id
	WHERE s.token_hash = $1 AND s.revoked_at IS NULL AND s.expires_at > now() AND u.disabled_at IS NULL`

// Session returns the live session whose secret hashes to sessionHash, or
// ErrNotFound (also when its principal is disabled).
func (db *DB) Session(ctx context.Context, sessionHash []byte) (Session, error) {
	return queryOne(ctx, db, "session", func(row sqlScanner) (s Session, err error) {
		err = row.Scan(&s.ID, &s.PrincipalID, &s.PrincipalName, &s.AccountID, &s.ExpiresAt)
		return s, err
	}, selectSessionSQL, sessionHash)
}
