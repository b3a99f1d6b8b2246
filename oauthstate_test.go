package main

import (
	"crypto/sha256"
	"database/sql"
	"testing"
	"time"

	"github.com/lib/pq"
)

// insertAccessToken writes synthetic OAuth state straight into the database: a
// client, a grant for (client, principal, project) and an access token bound
// to resource. Only the token's SHA-256 is stored, as the server does.
func insertAccessToken(t *testing.T, dbURL, principalID, projectID, resource, token string, scopes []string) {
	t.Helper()
	db, err := sql.Open("postgres", dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var client, grant string
	if err := db.QueryRow(`INSERT INTO oauth_clients (client_name, redirect_uris)
		VALUES ('e2e client', ARRAY['http://127.0.0.1/callback']) RETURNING id`).Scan(&client); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(`INSERT INTO oauth_grants (client_id, principal_id, project_id, scopes)
		VALUES ($1, $2, $3, $4) RETURNING id`, client, principalID, projectID, pq.Array(scopes)).Scan(&grant); err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256([]byte(token))
	if _, err := db.Exec(`INSERT INTO oauth_tokens (token_hash, kind, grant_id, scopes, resource, family_id, expires_at)
		VALUES ($1, 'access', $2, $3, $4, gen_random_uuid(), $5)`,
		h[:], grant, pq.Array(scopes), resource, time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
}
