package storetest

// OAuth state for tests that need a signed-in client without running the
// OAuth flow: tokens written straight into the database.

import (
	"crypto/sha256"
	"database/sql"
	"testing"
	"time"

	"github.com/lib/pq"

	"heyaira/cursor"
	"heyaira/oauth"
)

// InsertAccessToken writes synthetic OAuth state straight into the database: a
// client, a grant for (client, principal, project) and an access token bound
// to resource. Only the token's SHA-256 is stored, as the server does.
func InsertAccessToken(t testing.TB, dbURL, principalID, projectID, resource, token string, scopes []string) {
	t.Helper()
	InsertToken(t, dbURL, principalID, projectID, resource, "access", token, scopes, time.Hour)
}

// InsertToken makes a client that may use both grants, a grant of scopes and
// a token of kind ("access" or "refresh") that lives for ttl.
func InsertToken(t testing.TB, dbURL, principalID, projectID, resource, kind, token string, scopes []string, ttl time.Duration) (client string) {
	t.Helper()
	db, err := sql.Open("postgres", dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var grant string
	if err := db.QueryRow(`INSERT INTO oauth_clients (client_name, redirect_uris, metadata)
		VALUES ('test client', ARRAY['http://127.0.0.1/callback'], '{"grant_types":["authorization_code","refresh_token"]}')
		RETURNING id`).Scan(&client); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(`INSERT INTO oauth_grants (client_id, principal_id, project_id, scopes)
		VALUES ($1, $2, $3, $4) RETURNING id`, client, principalID, projectID, pq.Array(scopes)).Scan(&grant); err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256([]byte(token))
	if _, err := db.Exec(`INSERT INTO oauth_tokens (token_hash, kind, grant_id, scopes, resource, family_id, expires_at)
		VALUES ($1, $2, $3, $4, $5, gen_random_uuid(), $6)`,
		h[:], kind, grant, pq.Array(scopes), resource, time.Now().Add(ttl)); err != nil {
		t.Fatal(err)
	}
	return client
}

// Secrets are the secrets a server whose cursor key file holds keyFile
// mints and recognises: a test that stores a token or client itself mints
// it with them, as the server would.
func Secrets(t testing.TB, keyFile string) *oauth.Secrets {
	t.Helper()
	c, err := cursor.ParseKeys([]byte(keyFile))
	if err != nil {
		t.Fatal(err)
	}
	return oauth.NewSecrets(c.Derive(oauth.KeyLabel))
}
