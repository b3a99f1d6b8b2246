package store

import (
	"context"
	"database/sql"
)

// This file keeps an account's instruction sources: the core and mode layers
// of catalog profiles, read from docs/agents/ of a repository the account
// names directly. They feed workflow dispatch only; they grant no standalone
// document access and nothing in another project.

// NewAccountSource is what AddAccountSource needs. The caller has validated
// every field; the schema checks layer, path prefix, commit and branch again.
// Empty strings mean "not set".
type NewAccountSource struct {
	AccountID            string
	GitHubOwner          string
	GitHubRepository     string
	GitHubInstallationID int64
	Layer                string // core, mode:worker or mode:verifier
	Path                 string // under docs/agents/
	CommitSHA            string // exactly one of CommitSHA and TrackingRef
	TrackingRef          string
}

const accountSourceColumns = `id, account_id, github_owner, github_repository,
	github_installation_id, layer, path, commit_sha, tracking_ref, created_at, revoked_at`

const insertAccountSourceSQL = `
	INSERT INTO account_sources (account_id, github_owner, github_repository,
		github_installation_id, layer, path, commit_sha, tracking_ref)
	VALUES ($1, $2, $3, $4, $5, $6, NULLIF($7, ''), NULLIF($8, ''))
	RETURNING ` + accountSourceColumns

// AddAccountSource adds an account instruction source and audits it. An
// unknown account is a *RefusedError (ErrNotFound).
func (db *DB) AddAccountSource(ctx context.Context, in NewAccountSource) (AccountSource, error) {
	var s AccountSource
	return result(&s, db.inTx(ctx, "add account source", func(ctx context.Context, tx *sql.Tx) (err error) {
		if err = lockAccount(ctx, tx, in.AccountID); err != nil {
			return err
		}
		s, err = scanAccountSource(tx.QueryRowContext(ctx, insertAccountSourceSQL, in.AccountID, in.GitHubOwner,
			in.GitHubRepository, in.GitHubInstallationID, in.Layer, in.Path, in.CommitSHA, in.TrackingRef))
		if err != nil {
			return err
		}
		d := sourceDetails("", "instruction", s.Path, s.CommitSHA, s.TrackingRef, nil, 0)
		d["layer"] = s.Layer
		d["github_owner"] = s.GitHubOwner
		d["github_repository"] = s.GitHubRepository
		d["github_installation_id"] = s.GitHubInstallationID
		return insertAudit(ctx, tx, AuditEvent{Actor: ActorAdmin, Action: "account_source.add",
			AccountID: s.AccountID, Target: s.ID, Outcome: OutcomeOK, Details: d})
	}))
}

const revokeAccountSourceSQL = `
	UPDATE account_sources SET revoked_at = now()
	WHERE id = $1 AND revoked_at IS NULL
	RETURNING ` + accountSourceColumns

// RevokeAccountSource revokes an account instruction source and audits it. An
// unknown or already revoked source is a *RefusedError.
func (db *DB) RevokeAccountSource(ctx context.Context, sourceID string) (AccountSource, error) {
	var s AccountSource
	return result(&s, db.inTx(ctx, "revoke account source", func(ctx context.Context, tx *sql.Tx) (err error) {
		if s, err = scanAccountSource(tx.QueryRowContext(ctx, revokeAccountSourceSQL, sourceID)); err != nil {
			return missingOrRevoked(ctx, tx, err, "account_sources", "account source", sourceID)
		}
		return insertAudit(ctx, tx, AuditEvent{Actor: ActorAdmin, Action: "account_source.revoke",
			AccountID: s.AccountID, Target: s.ID, Outcome: OutcomeOK})
	}))
}

const listAccountSourcesSQL = `
	SELECT ` + accountSourceColumns + ` FROM account_sources
	WHERE account_id = $1
	ORDER BY created_at, id`

// ListAccountSources returns every instruction source of an account, revoked
// ones included, oldest first. An unknown account is a *RefusedError (ErrNotFound).
func (db *DB) ListAccountSources(ctx context.Context, accountID string) ([]AccountSource, error) {
	return listIn(ctx, db, "list account sources", inAccount(accountID), scanAccountSource,
		listAccountSourcesSQL, accountID)
}

func scanAccountSource(sc sqlScanner) (s AccountSource, err error) {
	err = sc.Scan(&s.ID, &s.AccountID, &s.GitHubOwner, &s.GitHubRepository, &s.GitHubInstallationID,
		&s.Layer, &s.Path, &s.CommitSHA, &s.TrackingRef, &s.CreatedAt, &s.RevokedAt)
	return s, err
}
