package store

import (
	"context"

	"github.com/lib/pq"
)

const selectClientGrantsSQL = `
	SELECT project_id, scopes FROM oauth_grants
	WHERE client_id = $1 AND principal_id = $2 AND revoked_at IS NULL`

// ClientGrants returns the scopes of the principal's active grants to a
// client, by project. The consent page uses it to tell a step-up (the
// client comes back for a scope its grant lacks) from a first request.
func (db *DB) ClientGrants(ctx context.Context, clientID, principalID string) (map[string][]string, error) {
	ctx, cancel := context.WithTimeout(ctx, QueryTimeout)
	defer cancel()
	out := map[string][]string{}
	err := each(ctx, db.sql, func(row sqlScanner) error {
		var project string
		var scopes []string
		err := row.Scan(&project, pq.Array(&scopes))
		out[project] = scopes
		return err
	}, selectClientGrantsSQL, clientID, principalID)
	return result(&out, wrap("client grants", err))
}
