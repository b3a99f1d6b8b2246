package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"regexp"
	"slices"
	"time"

	"github.com/lib/pq"
)

// This file, oauth_consent.go, oauth_tokens.go, oauth_refresh.go and
// sessions.go are the authorization server's storage. Secrets arrive only as
// SHA-256 hashes. Each state change that must happen once (a request
// answered, a code redeemed, a refresh token rotated, a sign-in link used) is
// a conditional UPDATE ... WHERE used_at IS NULL, or a row lock, inside one
// transaction, so two concurrent callers can never both win.

// ErrInvalidGrant is returned (inside a *RefusedError whose Msg says why, for
// logs only) when a code or refresh token cannot be redeemed: unknown, used,
// expired, revoked, issued to another client, or its grant or membership is
// gone. The token endpoint answers invalid_grant for all of these alike.
var ErrInvalidGrant = errors.New("store: invalid grant")

// ErrScopeExceeded is returned (inside a *RefusedError) when a refresh asks
// for a scope its refresh token does not carry, or a consent approves a
// scope the request did not ask for.
var ErrScopeExceeded = errors.New("store: scope exceeded")

// ActorPrincipal and ActorClient name non-admin actors in audit rows.
func ActorPrincipal(id string) string { return "principal:" + id }

// ActorClient names an OAuth client acting on its own (token revocation).
func ActorClient(id string) string { return "client:" + id }

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// IsUUID reports whether s is a UUID in PostgreSQL's canonical text form.
// Ids from requests are checked with it first, so that a malformed id is
// "not found" rather than a database error.
func IsUUID(s string) bool { return uuidRE.MatchString(s) }

// Client is a dynamically registered public OAuth client.
type Client struct {
	ID           string    `json:"client_id"`
	Name         string    `json:"client_name"`
	RedirectURIs []string  `json:"redirect_uris"`
	GrantTypes   []string  `json:"grant_types"`
	CreatedAt    time.Time `json:"created_at"`
}

// HasGrantType reports whether the client registered the grant type.
func (c Client) HasGrantType(g string) bool { return slices.Contains(c.GrantTypes, g) }

// clientMetadata is what oauth_clients.metadata holds.
type clientMetadata struct {
	GrantTypes []string `json:"grant_types"`
}

// RegisterClient stores a new public client. The caller has validated the
// name, redirect URIs and grant types; the schema bounds them again.
func (db *DB) RegisterClient(ctx context.Context, name string, redirectURIs, grantTypes []string) (Client, error) {
	c := Client{Name: name, RedirectURIs: redirectURIs, GrantTypes: grantTypes}
	meta, err := json.Marshal(clientMetadata{GrantTypes: grantTypes})
	if err != nil {
		return Client{}, err
	}
	return result(&c, db.inTx(ctx, "register client", func(ctx context.Context, tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, `
			INSERT INTO oauth_clients (client_name, redirect_uris, metadata) VALUES ($1, $2, $3)
			RETURNING id, created_at`, name, pq.Array(redirectURIs), meta).Scan(&c.ID, &c.CreatedAt)
	}))
}

// Client returns a registered client, or ErrNotFound (also for an id that
// is not a UUID). A metadata document URL finds the client stored for it
// (store/cimd_clients.go), fresh or not: the token endpoint needs only the
// row, never a new fetch.
func (db *DB) Client(ctx context.Context, id string) (Client, error) {
	if isMetadataURL(id) {
		c, err := db.CIMDClientByURL(ctx, id)
		return c.Client, err
	}
	if !IsUUID(id) {
		return Client{}, ErrNotFound
	}
	scan := func(row sqlScanner) (Client, error) { return scanClient(row) }
	return queryOne(ctx, db, "client", scan, `
		SELECT id, client_name, redirect_uris, metadata, created_at FROM oauth_clients
		WHERE id = $1 AND metadata_url IS NULL`, id)
}

// scanClient reads the columns id, client_name, redirect_uris, metadata and
// created_at of oauth_clients, then those of more.
func scanClient(row sqlScanner, more ...any) (c Client, err error) {
	var meta []byte
	dests := append([]any{&c.ID, &c.Name, pq.Array(&c.RedirectURIs), &meta, &c.CreatedAt}, more...)
	if err = row.Scan(dests...); err != nil {
		return c, err
	}
	var m clientMetadata
	err = json.Unmarshal(meta, &m)
	c.GrantTypes = m.GrantTypes
	return c, err
}

// PrincipalProjects returns the projects a principal is a member of, by name.
func (db *DB) PrincipalProjects(ctx context.Context, principalID string) ([]Project, error) {
	return queryAll(ctx, db, "principal projects", scanProject, `
		SELECT p.id, p.account_id, p.name, p.created_at
		FROM project_members m JOIN projects p ON p.id = m.project_id
		WHERE m.principal_id = $1
		ORDER BY p.name, p.id`, principalID)
}

// lockMembership checks that a principal is a member of a project and keeps
// the membership from being removed until the transaction ends. It returns
// the project's account, for audit rows.
func lockMembership(ctx context.Context, tx *sql.Tx, projectID, principalID string) (string, error) {
	if !IsUUID(projectID) || !IsUUID(principalID) {
		return "", refused(ErrNotFound, "not a member of that project")
	}
	var account string
	err := tx.QueryRowContext(ctx, `
		SELECT p.account_id FROM project_members m JOIN projects p ON p.id = m.project_id
		WHERE m.project_id = $1 AND m.principal_id = $2
		FOR SHARE OF m`, projectID, principalID).Scan(&account)
	return account, noRows(err, ErrNotFound, "not a member of that project")
}
