package store

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"time"

	"github.com/lib/pq"
)

// This file issues, lists and revokes legacy static project tokens. The store
// sees only the SHA-256 of a token, never the token: the admin CLI prints the
// token once and forgets it. Their scopes are limited to memory and tasks, by
// LegacyScopes here and by a CHECK in schema.sql, so a legacy token can never
// read documents or dispatch workflows.

// LegacyScopes are the only scopes a legacy token may hold.
var LegacyScopes = []string{"memory:read", "memory:write", "tasks:read", "tasks:write"}

// NewLegacyToken is what IssueLegacyToken needs.
type NewLegacyToken struct {
	ProjectID string
	Name      string
	TokenHash []byte   // SHA-256 of the token string, 32 bytes
	Scopes    []string // a non-empty subset of LegacyScopes
	// ExpiresIn, when positive, makes the token expire that long after it
	// is issued (by the database clock), in whole seconds; zero: never.
	ExpiresIn time.Duration
}

// MaxLegacyTokenLifetime bounds NewLegacyToken.ExpiresIn.
const MaxLegacyTokenLifetime = 10 * 366 * 24 * time.Hour

const legacyTokenColumns = `id, project_id, name, scopes, created_at, expires_at, revoked_at, NOT signed`

// insertLegacyTokenSQL: $5 is the lifetime in seconds, or NULL for none.
const insertLegacyTokenSQL = `
	INSERT INTO legacy_tokens (project_id, name, token_hash, scopes, expires_at)
	VALUES ($1, $2, $3, $4, now() + $5::bigint * interval '1 second')
	RETURNING ` + legacyTokenColumns

// IssueLegacyToken stores the hash of a new legacy token of a project and
// audits it. An unknown project is a *RefusedError (ErrNotFound); a hash that
// is not 32 bytes, a scope outside LegacyScopes, or an ExpiresIn that is
// negative, under a second or over MaxLegacyTokenLifetime, is ErrInvalid.
func (db *DB) IssueLegacyToken(ctx context.Context, in NewLegacyToken) (LegacyToken, error) {
	// Because only a hash may reach the table, anything but 32 bytes is refused:
	// a caller passing the token itself would otherwise store a secret.
	if len(in.TokenHash) != 32 {
		return LegacyToken{}, refused(ErrInvalid, "legacy token hash must be 32 bytes")
	}
	if len(in.Scopes) == 0 {
		return LegacyToken{}, refused(ErrInvalid, "legacy token needs at least one scope")
	}
	for _, s := range in.Scopes {
		if !slices.Contains(LegacyScopes, s) {
			return LegacyToken{}, refused(ErrInvalid, "scope %q is not allowed on a legacy token", s)
		}
	}
	var lifetime sql.NullInt64
	if in.ExpiresIn != 0 {
		if in.ExpiresIn < time.Second || in.ExpiresIn > MaxLegacyTokenLifetime {
			return LegacyToken{}, refused(ErrInvalid, "legacy token lifetime must be between 1s and %s", MaxLegacyTokenLifetime)
		}
		lifetime = sql.NullInt64{Int64: int64(in.ExpiresIn / time.Second), Valid: true}
	}
	var t LegacyToken
	return result(&t, db.inTx(ctx, "issue legacy token", func(ctx context.Context, tx *sql.Tx) error {
		p, err := lockProject(ctx, tx, in.ProjectID)
		if err != nil {
			return err
		}
		t, err = scanLegacyToken(tx.QueryRowContext(ctx, insertLegacyTokenSQL, in.ProjectID, in.Name,
			in.TokenHash, pq.Array(in.Scopes), lifetime))
		if err != nil {
			return err
		}
		details := map[string]any{"name": t.Name, "scopes": t.Scopes}
		if t.ExpiresAt != nil {
			details["expires_at"] = *t.ExpiresAt
		}
		return insertAudit(ctx, tx, AuditEvent{Actor: ActorAdmin, Action: "legacy_token.issue",
			ProjectID: p.ID, AccountID: p.AccountID, Target: t.ID, Outcome: OutcomeOK, Details: details})
	}))
}

const revokeLegacyTokenSQL = `
	UPDATE legacy_tokens SET revoked_at = now()
	WHERE id = $1 AND revoked_at IS NULL
	RETURNING ` + legacyTokenColumns

// RevokeLegacyToken revokes a legacy token and audits it. An unknown or
// already revoked token is a *RefusedError.
func (db *DB) RevokeLegacyToken(ctx context.Context, tokenID string) (LegacyToken, error) {
	var t LegacyToken
	return result(&t, db.inTx(ctx, "revoke legacy token", func(ctx context.Context, tx *sql.Tx) (err error) {
		if t, err = scanLegacyToken(tx.QueryRowContext(ctx, revokeLegacyTokenSQL, tokenID)); err != nil {
			err = missingOrRevoked(ctx, tx, err, "legacy_tokens", "legacy token", tokenID)
			if errors.Is(err, ErrNotFound) {
				return tokenNotFound(ctx, tx, "legacy token", tokenID, "oauth_tokens", "an OAuth token", "--token-id")
			}
			return err
		}
		return insertProjectAudit(ctx, tx, AuditEvent{Actor: ActorAdmin, Action: "legacy_token.revoke",
			ProjectID: t.ProjectID, Target: t.ID, Outcome: OutcomeOK})
	}))
}

// ListLegacyTokens returns every legacy token of a project (never a hash),
// revoked ones included, oldest first. An unknown project is a *RefusedError.
func (db *DB) ListLegacyTokens(ctx context.Context, projectID string) ([]LegacyToken, error) {
	return listIn(ctx, db, "list legacy tokens", inProject(projectID), scanLegacyToken, `
		SELECT `+legacyTokenColumns+` FROM legacy_tokens WHERE project_id = $1 ORDER BY created_at, id`, projectID)
}

// Live legacy tokens: unrevoked and unexpired, by the database clock. They
// belong to a project, not to a person, so offboarding a person leaves them
// working: RemoveMember and DisablePrincipal name them so that an
// administrator can revoke the ones the person knew.
const (
	liveLegacyTokensSQL = `
		SELECT ` + legacyTokenColumns + ` FROM legacy_tokens
		WHERE revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())`
	// liveProjectLegacyTokensSQL: those of the project $1.
	liveProjectLegacyTokensSQL = liveLegacyTokensSQL + ` AND project_id = $1
		ORDER BY created_at, id`
	// liveMemberLegacyTokensSQL: those of every project the principal $1 is a member of.
	liveMemberLegacyTokensSQL = liveLegacyTokensSQL + ` AND project_id IN (
			SELECT project_id FROM project_members WHERE principal_id = $1)
		ORDER BY project_id, created_at, id`
)

// ListLegacyReissue returns every live legacy token, of every project, that
// was issued before tokens carried the server's MAC: each no longer works
// and must be issued again (and the old one revoked).
func (db *DB) ListLegacyReissue(ctx context.Context) ([]LegacyToken, error) {
	return listIn(ctx, db, "list legacy tokens to re-issue", nil, scanLegacyToken, liveLegacyTokensSQL+`
		AND NOT signed ORDER BY project_id, created_at, id`)
}

func scanLegacyToken(sc sqlScanner) (t LegacyToken, err error) {
	err = sc.Scan(&t.ID, &t.ProjectID, &t.Name, pq.Array(&t.Scopes), &t.CreatedAt, &t.ExpiresAt, &t.RevokedAt, &t.Reissue)
	return t, err
}

// tokenNotFound is the refusal for a token id that revoke-token's flag does
// not know. When the id is a token of the other kind (table), the message
// names the flag that revokes it: list-grants lists both kinds together.
func tokenNotFound(ctx context.Context, tx *sql.Tx, what, tokenID, table, kind, flag string) error {
	var other bool
	if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM `+table+` WHERE id = $1)`, tokenID).Scan(&other); err != nil {
		return err
	}
	if other {
		return refused(ErrNotFound, "%s %s not found: it is %s; revoke it with heyaira-admin revoke-token %s %s",
			what, tokenID, kind, flag, tokenID)
	}
	return refused(ErrNotFound, "%s %s not found", what, tokenID)
}
