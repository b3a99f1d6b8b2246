package store

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"time"

	"github.com/lib/pq"
)

// This file redeems authorization codes (oauth_refresh.go rotates refresh
// tokens). All tokens descending from one code share a family_id; rotation
// keeps it, and a replayed code or a reused refresh token revokes the whole
// family.

// CodeGrant is what a stored authorization code is bound to.
type CodeGrant struct {
	ID          string
	ClientID    string
	GrantID     string
	RedirectURI string
	// RedirectURISent: the authorization request carried redirect_uri, so
	// the token request must carry the same (RFC 6749 §4.1.3).
	RedirectURISent bool
	CodeChallenge   string
	Scopes          []string
	Resource        string
	ExpiresAt       time.Time
}

// NewTokens are the hashes and lifetimes of the tokens to issue.
type NewTokens struct {
	AccessHash  []byte
	AccessTTL   time.Duration
	RefreshHash []byte        // nil: issue no refresh token
	RefreshTTL  time.Duration // codes only: the family's absolute lifetime
}

// Issued describes tokens just stored (never the tokens themselves).
type Issued struct {
	GrantID         string
	ClientID        string
	PrincipalID     string
	ProjectID       string
	FamilyID        string
	Scopes          []string // the access token's scopes
	AccessExpiresAt time.Time
	Refresh         bool
}

// CodeRedemption is a token request with grant_type=authorization_code.
type CodeRedemption struct {
	CodeHash []byte
	ClientID string
	Now      time.Time
	// Check runs after the code has been consumed and before tokens are
	// issued: the caller's redirect-URI, resource and PKCE checks. If it
	// fails, the code stays consumed (see docs/oauth.md: a code dies on its
	// first failed redemption) and its error is returned.
	Check  func(CodeGrant) error
	Tokens NewTokens
}

// codeColumns are the columns scanCode reads.
const codeColumns = `id, client_id, grant_id, redirect_uri, code_challenge, scopes, resource, expires_at,
	redirect_uri_sent`

// consumeCodeSQL takes a code. The WHERE clause makes it single-use under
// concurrency: a second UPDATE waits for the first to commit, then finds
// used_at set and matches nothing.
const consumeCodeSQL = `
	UPDATE oauth_codes SET used_at = $2
	WHERE code_hash = $1 AND used_at IS NULL
	RETURNING ` + codeColumns

func scanCode(row sqlScanner) (c CodeGrant, err error) {
	err = row.Scan(&c.ID, &c.ClientID, &c.GrantID, &c.RedirectURI, &c.CodeChallenge, pq.Array(&c.Scopes),
		&c.Resource, &c.ExpiresAt, &c.RedirectURISent)
	return c, err
}

// activeGrantSQL returns a grant's principal and project if the grant is
// not revoked, its principal is not disabled and is still a member of its
// project; it locks the membership so it cannot be removed before tokens
// are stored.
const activeGrantSQL = `
	SELECT g.principal_id, g.project_id, g.scopes
	FROM oauth_grants g
	JOIN project_members m ON m.project_id = g.project_id AND m.principal_id = g.principal_id
	JOIN principals u ON u.id = g.principal_id AND u.disabled_at IS NULL
	WHERE g.id = $1 AND g.revoked_at IS NULL
	FOR SHARE OF g, m`

// lockGrantSQL take the share locks activeGrantSQL holds one row at a time,
// in offboarding's order (lifecycle.go, grants_admin.go): the membership,
// which remove-member deletes first, then the grant, which remove-member,
// disable-principal and revoke-grant update before the tokens. A join locks
// its rows in its plan's order, which deadlocked with remove-member. $1 is
// the grant's id; a row that no longer qualifies is not locked.
var lockGrantSQL = [...]string{
	`SELECT 1 FROM project_members m
	JOIN oauth_grants g ON m.project_id = g.project_id AND m.principal_id = g.principal_id
	WHERE g.id = $1 FOR SHARE OF m`,
	`SELECT 1 FROM oauth_grants WHERE id = $1 FOR SHARE`,
}

// lockGrant takes lockGrantSQL's locks on grantID.
func lockGrant(ctx context.Context, tx *sql.Tx, grantID string) error {
	for _, q := range lockGrantSQL {
		if _, err := tx.ExecContext(ctx, q, grantID); err != nil {
			return err
		}
	}
	return nil
}

// lockTokenScope takes, before a token's own row lock, the locks of what the
// token belongs to, in the order every transaction takes them: its family's
// advisory lock (a reuse, a client's revocation and an administrator's each
// revoke a whole family while holding one of its tokens), then lockGrant's
// membership and grant (offboarding's order: membership, grant, tokens).
// col is the column the token is found by, a constant; a token that does not
// exist locks nothing.
func lockTokenScope(ctx context.Context, tx *sql.Tx, col string, v any) error {
	var grantID, family string
	err := tx.QueryRowContext(ctx, `SELECT grant_id, COALESCE(family_id::text, '') FROM oauth_tokens WHERE `+col+` = $1`,
		v).Scan(&grantID, &family)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil
	case err != nil:
		return err
	case family != "":
		if err := advisoryLock(ctx, tx, lockFamily, family); err != nil {
			return err
		}
	}
	return lockGrant(ctx, tx, grantID)
}

// activeGrant reads the principal and project of out.GrantID into out
// (activeGrantSQL) and returns the grant's scopes; a revoked grant or a lost
// membership is a refusal. The caller has taken lockGrant's locks first.
func activeGrant(ctx context.Context, tx *sql.Tx, out *Issued) (scopes []string, refusal, err error) {
	err = tx.QueryRowContext(ctx, activeGrantSQL, out.GrantID).Scan(&out.PrincipalID, &out.ProjectID, pq.Array(&scopes))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, invalidGrant("grant revoked or principal no longer a member"), nil
	}
	return scopes, nil, err
}

const insertTokenSQL = `
	INSERT INTO oauth_tokens (token_hash, kind, grant_id, code_id, scopes, resource, family_id, expires_at)
	VALUES ($1, $2, $3, NULLIF($4, '')::uuid, $5, $6, $7::uuid, $8)`

// RedeemCode exchanges an authorization code for tokens. Refusals are
// *RefusedError values with Kind ErrInvalidGrant, or the Check error. A
// second redemption of a code by its own client with valid parameters
// revokes every token issued from it (OAuth 2.1 §4.1.3), commits that, and
// is refused.
func (db *DB) RedeemCode(ctx context.Context, in CodeRedemption) (Issued, error) {
	var out Issued
	return result(&out, db.refusingTx(ctx, "redeem code", func(ctx context.Context, tx *sql.Tx) (refusal, err error) {
		c, err := scanCode(tx.QueryRowContext(ctx, consumeCodeSQL, in.CodeHash, in.Now))
		if errors.Is(err, sql.ErrNoRows) {
			return codeNotRedeemable(ctx, tx, in)
		}
		if err != nil {
			return nil, err
		}
		// From here on the code is consumed whatever happens; a refusal
		// commits that.
		switch {
		case c.ClientID != in.ClientID:
			return invalidGrant("code issued to another client"), nil
		case !in.Now.Before(c.ExpiresAt):
			return invalidGrant("code expired"), nil
		}
		if in.Check != nil {
			if refusal = in.Check(c); refusal != nil {
				return refusal, nil
			}
		}
		out.GrantID, out.ClientID = c.GrantID, c.ClientID
		if err := lockGrant(ctx, tx, out.GrantID); err != nil {
			return nil, err
		}
		grantScopes, refusal, err := activeGrant(ctx, tx, &out)
		if refusal != nil || err != nil {
			return refusal, err
		}
		out.Scopes = intersect(c.Scopes, grantScopes)
		if err := tx.QueryRowContext(ctx, `SELECT gen_random_uuid()::text`).Scan(&out.FamilyID); err != nil {
			return nil, err
		}
		if err := issue(ctx, tx, &out, c.ID, c.Resource, out.Scopes, out.Scopes, in.Now, in.Now.Add(in.Tokens.RefreshTTL), in.Tokens); err != nil {
			return nil, err
		}
		return nil, boundFamilies(ctx, tx, &out, in.Now)
	}))
}

// refusingTx is inTx for the token endpoint, whose refusals commit what the
// transaction did (a consumed code, a revoked family): fn returns a refusal
// beside its error, and the refusal is the result once the commit succeeded.
func (db *DB) refusingTx(ctx context.Context, op string,
	fn func(ctx context.Context, tx *sql.Tx) (refusal, err error)) error {
	var refusal error
	err := db.inTx(ctx, op, func(ctx context.Context, tx *sql.Tx) (err error) {
		refusal, err = fn(ctx, tx)
		return err
	})
	if err == nil {
		err = refusal
	}
	return err
}

// invalidGrant is a refusal of a code or refresh token; msg is for logs only.
func invalidGrant(msg string) error { return refused(ErrInvalidGrant, "%s", msg) }

// codeNotRedeemable explains why consumeCodeSQL matched nothing. A code that
// exists and was already used, presented again by its own client with
// parameters that pass the caller's Check (the right redirect URI, resource
// and PKCE verifier), is a replay by someone holding everything the first
// redemption had: every token family the code started is revoked (OAuth 2.1
// §4.1.3). A replay with invalid parameters revokes nothing (OAuth 2.1
// §7.5.2), so knowing a used code alone cannot end a session. The code row
// is locked first, so concurrent replays queue instead of deadlocking.
func codeNotRedeemable(ctx context.Context, tx *sql.Tx, in CodeRedemption) (refusal, err error) {
	c, err := scanCode(tx.QueryRowContext(ctx, `SELECT `+codeColumns+`
		FROM oauth_codes WHERE code_hash = $1 FOR UPDATE`, in.CodeHash))
	if errors.Is(err, sql.ErrNoRows) {
		return invalidGrant("unknown code"), nil
	}
	if err != nil {
		return nil, err
	}
	if c.ClientID != in.ClientID {
		return invalidGrant("used code presented by another client"), nil
	}
	if in.Check != nil && in.Check(c) != nil {
		return invalidGrant("used code presented with invalid parameters"), nil
	}
	n, err := execCount(ctx, tx, `
		UPDATE oauth_tokens SET revoked_at = $2
		WHERE family_id IN (SELECT family_id FROM oauth_tokens WHERE code_id = $1) AND revoked_at IS NULL`, c.ID, in.Now)
	if err != nil {
		return nil, err
	}
	var project, account string
	if err := tx.QueryRowContext(ctx, `SELECT g.project_id, p.account_id FROM oauth_grants g
		JOIN projects p ON p.id = g.project_id WHERE g.id = $1`, c.GrantID).Scan(&project, &account); err != nil {
		return nil, err
	}
	return invalidGrant("code already used: tokens issued from it revoked"), insertAudit(ctx, tx, AuditEvent{
		Actor: ActorClient(c.ClientID), Action: "oauth_code.replay", ProjectID: project, AccountID: account,
		Target: c.ID, Outcome: "invalid_grant", Details: map[string]any{"grant_id": c.GrantID, "tokens_revoked": n}})
}

// issue stores a new access token (and refresh token, if asked) in out's
// family and fills in out.
func issue(ctx context.Context, tx *sql.Tx, out *Issued, codeID, resource string, accessScopes, refreshScopes []string,
	now, refreshExpires time.Time, t NewTokens) error {
	out.AccessExpiresAt = now.Add(t.AccessTTL)
	if _, err := tx.ExecContext(ctx, insertTokenSQL, t.AccessHash, "access", out.GrantID, codeID,
		pq.Array(accessScopes), resource, out.FamilyID, out.AccessExpiresAt); err != nil {
		return err
	}
	if t.RefreshHash == nil {
		return nil
	}
	out.Refresh = true
	_, err := tx.ExecContext(ctx, insertTokenSQL, t.RefreshHash, "refresh", out.GrantID, codeID,
		pq.Array(refreshScopes), resource, out.FamilyID, refreshExpires)
	return err
}

// intersect returns the elements of a that are also in b, in a's order.
func intersect(a, b []string) []string {
	out := []string{}
	for _, s := range a {
		if slices.Contains(b, s) {
			out = append(out, s)
		}
	}
	return out
}
