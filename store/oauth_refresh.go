package store

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"time"

	"github.com/lib/pq"
)

// Rotation is a token request with grant_type=refresh_token.
type Rotation struct {
	RefreshHash []byte
	ClientID    string
	// Scopes, when not nil, narrows the new access token; it must be a
	// subset of the refresh token's scopes (ErrScopeExceeded otherwise).
	// The new refresh token keeps the old one's scopes (RFC 6749 §6).
	Scopes []string
	Now    time.Time
	// Tokens.RefreshTTL is ignored: the new refresh token inherits the old
	// one's expiry, so a family never outlives its first refresh token.
	Tokens NewTokens
}

// selectRefreshSQL locks the presented token. Because concurrent rotations
// of one token queue on this lock, the second sees used_at set and is
// treated as a reuse.
const selectRefreshSQL = `
	SELECT t.id, t.kind, t.grant_id, t.scopes, t.resource, t.family_id::text, t.expires_at,
	       t.used_at IS NOT NULL, t.revoked_at IS NOT NULL, g.client_id, g.project_id
	FROM oauth_tokens t JOIN oauth_grants g ON g.id = t.grant_id
	WHERE t.token_hash = $1
	FOR UPDATE OF t`

// RotateRefresh exchanges a refresh token for a new access token and a new
// refresh token of the same family, and marks the old one used. Refusals
// are *RefusedError values: ErrInvalidGrant (unknown, not a refresh token,
// another client's, expired, revoked, grant revoked, principal no longer a
// member) or ErrScopeExceeded; none of them changes anything, except reuse:
// presenting a refresh token that was already rotated revokes its whole
// family (RFC 9700 §4.14.2), commits that, audits it and is refused.
func (db *DB) RotateRefresh(ctx context.Context, in Rotation) (Issued, error) {
	var out Issued
	return result(&out, db.refusingTx(ctx, "rotate refresh", func(ctx context.Context, tx *sql.Tx) (refusal, err error) {
		var id, kind, resource, project string
		var scopes []string
		var expires time.Time
		var used, revoked bool
		// Locking the token first deadlocked with a disable-principal,
		// remove-member or revoke-grant in progress (lockTokenScope).
		if err := lockTokenScope(ctx, tx, "token_hash", in.RefreshHash); err != nil {
			return nil, err
		}
		err = tx.QueryRowContext(ctx, selectRefreshSQL, in.RefreshHash).Scan(&id, &kind, &out.GrantID, pq.Array(&scopes),
			&resource, &out.FamilyID, &expires, &used, &revoked, &out.ClientID, &project)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return invalidGrant("unknown refresh token"), nil
		case err != nil:
			return nil, err
		case kind != "refresh":
			return invalidGrant("not a refresh token"), nil
		case out.ClientID != in.ClientID:
			// Not a reuse: the family is left alone, because a client that
			// merely names a token it does not own proves nothing about it.
			return invalidGrant("refresh token issued to another client"), nil
		case used:
			err = revokeFamilyForReuse(ctx, tx, id, out.FamilyID, out.ClientID, project, in.Now)
			return invalidGrant("refresh token reused: family revoked"), err
		case revoked:
			return invalidGrant("refresh token revoked"), nil
		case !in.Now.Before(expires):
			return invalidGrant("refresh token expired"), nil
		}
		accessScopes := []string(scopes)
		if in.Scopes != nil {
			for _, s := range in.Scopes {
				if !slices.Contains(scopes, s) {
					return refused(ErrScopeExceeded, "refresh asked for a scope the token does not carry"), nil
				}
			}
			accessScopes = intersect(scopes, in.Scopes)
		}
		grantScopes, refusal, err := activeGrant(ctx, tx, &out) // locked by lockTokenScope
		if refusal != nil || err != nil {
			return refusal, err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE oauth_tokens SET used_at = $2 WHERE id = $1`, id, in.Now); err != nil {
			return nil, err
		}
		// A refresh never adds a scope: both new tokens are bounded by the
		// old refresh token and by the grant.
		out.Scopes = intersect(accessScopes, grantScopes)
		return nil, issue(ctx, tx, &out, "", resource, out.Scopes, intersect(scopes, grantScopes), in.Now, expires, in.Tokens)
	}))
}

func revokeFamilyForReuse(ctx context.Context, tx *sql.Tx, tokenID, family, client, project string, now time.Time) error {
	n, err := execCount(ctx, tx, `UPDATE oauth_tokens SET revoked_at = $2
		WHERE family_id = $1::uuid AND revoked_at IS NULL`, family, now)
	if err != nil {
		return err
	}
	return insertProjectAudit(ctx, tx, AuditEvent{Actor: ActorClient(client), Action: "oauth_refresh.reuse",
		ProjectID: project, Target: tokenID, Outcome: "invalid_grant",
		Details: map[string]any{"family_id": family, "tokens_revoked": n}})
}

// RevokeClientToken implements RFC 7009 for a public client: it revokes the
// token whose hash is given if, and only if, it was issued to clientID. A
// refresh token takes its whole family with it; an access token only
// itself. It reports whether anything was revoked; an unknown token, or
// another client's, is not an error (RFC 7009 §2.2: answer 200 regardless).
func (db *DB) RevokeClientToken(ctx context.Context, tokenHash []byte, clientID string, now time.Time) (bool, error) {
	return txValue(ctx, db, "revoke client token", func(ctx context.Context, tx *sql.Tx) (bool, error) {
		if err := lockTokenScope(ctx, tx, "token_hash", tokenHash); err != nil {
			return false, err
		}
		var id, kind, family, client, project string
		err := tx.QueryRowContext(ctx, `
			SELECT t.id, t.kind, t.family_id::text, g.client_id, g.project_id
			FROM oauth_tokens t JOIN oauth_grants g ON g.id = t.grant_id
			WHERE t.token_hash = $1 AND t.revoked_at IS NULL
			FOR UPDATE OF t`, tokenHash).Scan(&id, &kind, &family, &client, &project)
		if errors.Is(err, sql.ErrNoRows) || err == nil && client != clientID {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		q, arg := `UPDATE oauth_tokens SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL`, id
		if kind == "refresh" {
			q, arg = `UPDATE oauth_tokens SET revoked_at = $2 WHERE family_id = $1::uuid AND revoked_at IS NULL`, family
		}
		n, err := execCount(ctx, tx, q, arg, now)
		if err != nil {
			return false, err
		}
		return true, insertProjectAudit(ctx, tx, AuditEvent{Actor: ActorClient(client), Action: "oauth_token.revoke",
			ProjectID: project, Target: id, Outcome: OutcomeOK,
			Details: map[string]any{"kind": kind, "family_id": family, "tokens_revoked": n}})
	})
}
