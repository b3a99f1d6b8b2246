package store

import (
	"context"
	"time"

	"github.com/lib/pq"
)

// Auth is what a valid bearer token says about its holder.
type Auth struct {
	// Kind is "oauth" or "legacy".
	Kind string
	// TokenID is the oauth_tokens or legacy_tokens row.
	TokenID string
	// GrantID, ClientID and PrincipalID are empty for legacy tokens.
	GrantID     string
	ClientID    string
	PrincipalID string
	ProjectID   string
	Scopes      []string
	// Resource is the audience the token was issued for (empty for legacy tokens).
	Resource  string
	ExpiresAt *time.Time
	// GitHubRequestsHourly is the project's GitHub request budget per hour
	// as an administrator set it (project_limits), or 0 for the default.
	GitHubRequestsHourly int
}

// authenticateSQL finds an active token by hash. For OAuth access tokens the
// grant must not be revoked, the principal must not be disabled and must
// still be a member of the grant's project; expiry (of legacy tokens too,
// when they have one) is checked against the caller's clock. One
// prepared statement, so that authorization costs one round trip.
const authenticateSQL = `
	SELECT 'oauth', t.id::text, g.id::text, g.client_id::text, g.principal_id::text, g.project_id::text,
	       t.scopes, t.resource, t.expires_at,
	       COALESCE((SELECT github_requests_hourly FROM project_limits WHERE project_id = g.project_id), 0)
	FROM oauth_tokens t
	JOIN oauth_grants g ON g.id = t.grant_id
	JOIN project_members m ON m.project_id = g.project_id AND m.principal_id = g.principal_id
	JOIN principals u ON u.id = g.principal_id AND u.disabled_at IS NULL
	WHERE t.token_hash = $1 AND t.kind = 'access' AND t.revoked_at IS NULL
	  AND g.revoked_at IS NULL AND t.expires_at > $2
	UNION ALL
	SELECT 'legacy', l.id::text, '', '', '', l.project_id::text, l.scopes, '', l.expires_at,
	       COALESCE((SELECT github_requests_hourly FROM project_limits WHERE project_id = l.project_id), 0)
	FROM legacy_tokens l
	WHERE l.token_hash = $1 AND l.revoked_at IS NULL AND (l.expires_at IS NULL OR l.expires_at > $2)
	LIMIT 1`

// Authenticate returns the holder of the token whose SHA-256 is tokenHash, or
// ErrNotFound when no active token has that hash. Because only hashes are
// compared, the token itself never reaches the database.
func (db *DB) Authenticate(ctx context.Context, tokenHash []byte, now time.Time) (Auth, error) {
	var a Auth
	return result(&a, db.scanPrepared(ctx, "authenticate", authDests(&a), authenticateSQL, tokenHash, now))
}

// authDests are the scan destinations of authenticateSQL's columns, in order.
func authDests(a *Auth) []any {
	return []any{&a.Kind, &a.TokenID, &a.GrantID, &a.ClientID, &a.PrincipalID, &a.ProjectID,
		pq.Array(&a.Scopes), &a.Resource, &a.ExpiresAt, &a.GitHubRequestsHourly}
}
