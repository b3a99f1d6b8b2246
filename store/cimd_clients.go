package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"strings"
	"time"

	"github.com/lib/pq"
)

// Clients named by a client ID metadata document URL (CIMD) are rows of
// oauth_clients like registered ones, with the URL in metadata_url. Grants,
// codes and tokens reference the row's uuid, so nothing else changes; the
// row is the cache of the document, shared by every replica, and
// fresh_until is when it must be fetched again.

// CIMDClient is a client resolved from its metadata document.
type CIMDClient struct {
	Client
	URL        string
	FetchedAt  time.Time
	FreshUntil time.Time
}

// CIMDClientByURL returns the stored client for a metadata document URL,
// fresh or not, or ErrNotFound.
func (db *DB) CIMDClientByURL(ctx context.Context, url string) (CIMDClient, error) {
	return queryOne(ctx, db, "cimd client", scanCIMDClient, `
		SELECT id, client_name, redirect_uris, metadata, created_at, metadata_url, fetched_at, fresh_until
		FROM oauth_clients WHERE metadata_url = $1`, url)
}

// upsertCIMDClientSQL stores a valid document. Two replicas fetching the
// same URL at once both succeed; the later document wins, and the id stays.
const upsertCIMDClientSQL = `
	INSERT INTO oauth_clients (client_name, redirect_uris, metadata, metadata_url, fetched_at, fresh_until)
	VALUES ($1, $2, $3, $4, $5, $6)
	ON CONFLICT (metadata_url) WHERE metadata_url IS NOT NULL
	DO UPDATE SET client_name = EXCLUDED.client_name, redirect_uris = EXCLUDED.redirect_uris,
	              metadata = EXCLUDED.metadata, fetched_at = EXCLUDED.fetched_at, fresh_until = EXCLUDED.fresh_until
	RETURNING id, client_name, redirect_uris, metadata, created_at, metadata_url, fetched_at, fresh_until`

// SaveCIMDClient stores what a valid document says, creating the client
// on first use. Only valid documents are ever saved: a failed fetch leaves
// the row as it was.
func (db *DB) SaveCIMDClient(ctx context.Context, c CIMDClient) (CIMDClient, error) {
	meta, err := json.Marshal(clientMetadata{GrantTypes: c.GrantTypes})
	if err != nil {
		return CIMDClient{}, err
	}
	return txValue(ctx, db, "save cimd client", func(ctx context.Context, tx *sql.Tx) (CIMDClient, error) {
		saved, err := scanCIMDClient(tx.QueryRowContext(ctx, upsertCIMDClientSQL, c.Name, pq.Array(c.RedirectURIs),
			meta, c.URL, c.FetchedAt, c.FreshUntil))
		return saved, wrap("cimd client", err)
	})
}

func scanCIMDClient(row sqlScanner) (c CIMDClient, err error) {
	c.Client, err = scanClient(row, &c.URL, &c.FetchedAt, &c.FreshUntil)
	return c, err
}

// isMetadataURL tells a client ID metadata document URL from a uuid.
func isMetadataURL(id string) bool { return strings.HasPrefix(id, "https://") }
