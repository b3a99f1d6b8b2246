package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/lib/pq"
)

// This file is the administrator's view of OAuth grants and tokens: listing a
// project's grants and revoking a grant or a token. The OAuth server creates
// these rows; here they are only read and revoked. Revocation is a timestamp,
// never a delete, and the resource server re-checks it on every request.

// GrantSummary is one OAuth grant as the admin CLI lists it.
type GrantSummary struct {
	ID            string         `json:"grant_id"`
	ClientID      string         `json:"client_id"`
	ClientName    string         `json:"client_name"`
	PrincipalID   string         `json:"principal_id"`
	PrincipalName string         `json:"principal_name"`
	ProjectID     string         `json:"project_id"`
	Scopes        []string       `json:"scopes"`
	CreatedAt     time.Time      `json:"created_at"`
	RevokedAt     *time.Time     `json:"revoked_at"`
	ActiveTokens  []TokenSummary `json:"active_tokens"`
	// Families are the grant's live token families, most recently used
	// first (families.go): at most MaxLiveFamilies.
	Families []FamilySummary `json:"families"`
}

// TokenSummary is an unexpired, unrevoked OAuth token of a grant (never its hash).
type TokenSummary struct {
	ID        string    `json:"token_id"`
	Kind      string    `json:"kind"` // access or refresh
	FamilyID  string    `json:"family_id"`
	ExpiresAt time.Time `json:"expires_at"`
}

// Revocation reports what RevokeGrant or RevokeOAuthToken changed.
type Revocation struct {
	ID            string    `json:"id"`
	Kind          string    `json:"kind"` // grant, access or refresh
	ProjectID     string    `json:"project_id"`
	RevokedAt     time.Time `json:"revoked_at"`
	TokensRevoked int64     `json:"tokens_revoked"`
}

const listGrantsSQL = `
	SELECT g.id, g.client_id, c.client_name, g.principal_id, u.name, g.project_id,
	       g.scopes, g.created_at, g.revoked_at
	FROM oauth_grants g
	JOIN oauth_clients c ON c.id = g.client_id
	JOIN principals u ON u.id = g.principal_id
	WHERE g.project_id = $1
	ORDER BY g.created_at, g.id`

const listActiveTokensSQL = `
	SELECT t.id, t.grant_id, t.kind, t.family_id, t.expires_at
	FROM oauth_tokens t JOIN oauth_grants g ON g.id = t.grant_id
	WHERE g.project_id = $1 AND t.revoked_at IS NULL AND t.expires_at > now()
	  AND NOT (t.kind = 'refresh' AND t.used_at IS NOT NULL) -- exchanged: a reuse revokes its family
	ORDER BY t.created_at, t.id`

// ListGrants returns every OAuth grant of a project, revoked ones included,
// oldest first, each with its active tokens. An unknown project is a
// *RefusedError (ErrNotFound).
func (db *DB) ListGrants(ctx context.Context, projectID string) ([]GrantSummary, error) {
	out := []GrantSummary{}
	return result(&out, db.inTx(ctx, "list grants", func(ctx context.Context, tx *sql.Tx) error {
		if _, err := lockProject(ctx, tx, projectID); err != nil {
			return err
		}
		index := map[string]int{}
		err := each(ctx, tx, func(row sqlScanner) error {
			g := GrantSummary{ActiveTokens: []TokenSummary{}, Families: []FamilySummary{}}
			if err := row.Scan(&g.ID, &g.ClientID, &g.ClientName, &g.PrincipalID, &g.PrincipalName,
				&g.ProjectID, pq.Array(&g.Scopes), &g.CreatedAt, &g.RevokedAt); err != nil {
				return err
			}
			index[g.ID] = len(out)
			out = append(out, g)
			return nil
		}, listGrantsSQL, projectID)
		if err != nil {
			return err
		}
		if err := addFamilies(ctx, tx, projectID, out, index); err != nil {
			return err
		}
		return each(ctx, tx, func(row sqlScanner) error {
			var t TokenSummary
			var grantID string
			if err := row.Scan(&t.ID, &grantID, &t.Kind, &t.FamilyID, &t.ExpiresAt); err != nil {
				return err
			}
			if i, ok := index[grantID]; ok {
				out[i].ActiveTokens = append(out[i].ActiveTokens, t)
			}
			return nil
		}, listActiveTokensSQL, projectID)
	}))
}

// RevokeGrant revokes an OAuth grant and every token issued under it, in one
// transaction, and audits it. An unknown or already revoked grant is a
// *RefusedError. Pending authorization codes of the grant are left alone:
// the token endpoint refuses to redeem a code whose grant is revoked.
func (db *DB) RevokeGrant(ctx context.Context, grantID string) (Revocation, error) {
	r := Revocation{ID: grantID, Kind: "grant"}
	return result(&r, db.inTx(ctx, "revoke grant", func(ctx context.Context, tx *sql.Tx) (err error) {
		if err := tx.QueryRowContext(ctx, `UPDATE oauth_grants SET revoked_at = now(), updated_at = now()
			WHERE id = $1 AND revoked_at IS NULL
			RETURNING project_id, revoked_at`, grantID).Scan(&r.ProjectID, &r.RevokedAt); err != nil {
			return missingOrRevoked(ctx, tx, err, "oauth_grants", "grant", grantID)
		}
		if r.TokensRevoked, err = execCount(ctx, tx, `UPDATE oauth_tokens SET revoked_at = now()
			WHERE grant_id = $1 AND revoked_at IS NULL`, grantID); err != nil {
			return err
		}
		return insertProjectAudit(ctx, tx, AuditEvent{Actor: ActorAdmin, Action: "oauth_grant.revoke",
			ProjectID: r.ProjectID, Target: grantID, Outcome: OutcomeOK,
			Details: map[string]any{"tokens_revoked": r.TokensRevoked}})
	}))
}

const selectTokenForRevokeSQL = `
	SELECT t.kind, t.family_id, t.revoked_at IS NOT NULL, g.project_id
	FROM oauth_tokens t JOIN oauth_grants g ON g.id = t.grant_id
	WHERE t.id = $1
	FOR UPDATE OF t`

// RevokeOAuthToken revokes an OAuth token and audits it. Revoking a refresh
// token revokes its whole family (every access and refresh token sharing its
// family_id), because a stolen refresh token must not leave live siblings. An
// unknown or already revoked token is a *RefusedError.
func (db *DB) RevokeOAuthToken(ctx context.Context, tokenID string) (Revocation, error) {
	r := Revocation{ID: tokenID}
	return result(&r, db.inTx(ctx, "revoke token", func(ctx context.Context, tx *sql.Tx) error {
		if err := lockTokenScope(ctx, tx, "id", tokenID); err != nil {
			return err
		}
		var family string
		var revoked bool
		err := tx.QueryRowContext(ctx, selectTokenForRevokeSQL, tokenID).Scan(&r.Kind, &family, &revoked, &r.ProjectID)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return tokenNotFound(ctx, tx, "token", tokenID, "legacy_tokens", "a legacy token", "--legacy-token-id")
		case err != nil:
			return err
		case revoked:
			return refused(ErrConflict, "token %s is already revoked", tokenID)
		}
		if err := tx.QueryRowContext(ctx, `UPDATE oauth_tokens SET revoked_at = now()
			WHERE id = $1 AND revoked_at IS NULL RETURNING revoked_at`, tokenID).Scan(&r.RevokedAt); err != nil {
			return err
		}
		r.TokensRevoked = 1
		if r.Kind == "refresh" {
			n, err := execCount(ctx, tx, `UPDATE oauth_tokens SET revoked_at = now()
				WHERE family_id = $1 AND revoked_at IS NULL`, family)
			if err != nil {
				return err
			}
			r.TokensRevoked += n
		}
		return insertProjectAudit(ctx, tx, AuditEvent{Actor: ActorAdmin, Action: "oauth_token.revoke",
			ProjectID: r.ProjectID, Target: tokenID, Outcome: OutcomeOK,
			Details: map[string]any{"kind": r.Kind, "family_id": family, "tokens_revoked": r.TokensRevoked}})
	}))
}
