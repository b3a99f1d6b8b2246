package store

import (
	"context"
	"database/sql"
	"errors"
)

// This file keeps a project's document allowlist. A document source names one
// path in one linked repository, pinned at a commit or (role instruction only)
// tracking a branch that workflow dispatch resolves. Sources are added and
// revoked only here, by the admin CLI: no model-facing path writes them.

// NewDocumentSource is what AddDocumentSource needs. The caller has validated
// every field (path, commit, branch, profile, limit); the schema checks the
// same rules again. Empty strings mean "not set".
type NewDocumentSource struct {
	ProjectID        string
	GitHubOwner      string
	GitHubRepository string
	Role             string // runtime, reference or instruction
	Path             string
	CommitSHA        string // exactly one of CommitSHA and TrackingRef
	TrackingRef      string
	Profile          string
	FragmentLimit    int
}

const insertDocumentSourceSQL = `
	INSERT INTO document_sources (project_id, repository_id, role, path, commit_sha,
		tracking_ref, profile, fragment_limit)
	VALUES ($1, $2, $3, $4, NULLIF($5, ''), NULLIF($6, ''), NULLIF($7, ''), $8)
	RETURNING id`

// duplicateSourceSQL finds an active source that already allowlists the same
// document: same link, role, path, pin and profile. Only the fragment limit
// may differ, and two limits for one document are a mistake, not a choice.
const duplicateSourceSQL = `
	SELECT id FROM document_sources
	WHERE repository_id = $1 AND role = $2 AND path = $3 AND revoked_at IS NULL
	  AND commit_sha IS NOT DISTINCT FROM NULLIF($4, '')
	  AND tracking_ref IS NOT DISTINCT FROM NULLIF($5, '')
	  AND profile IS NOT DISTINCT FROM NULLIF($6, '')
	LIMIT 1`

// AddDocumentSource allowlists a document of a repository linked to the
// project and audits it. An unknown project, a repository that is not
// actively linked to it, or an active source that already allowlists the
// same document (duplicateSourceSQL) is a *RefusedError; the last names the
// existing source, so the administrator can keep it or revoke it first.
func (db *DB) AddDocumentSource(ctx context.Context, in NewDocumentSource) (DocumentSource, error) {
	var s DocumentSource
	return result(&s, db.inTx(ctx, "add document source", func(ctx context.Context, tx *sql.Tx) error {
		p, err := lockProject(ctx, tx, in.ProjectID)
		if err != nil {
			return err
		}
		if err := advisoryLock(ctx, tx, lockAllowlist, in.ProjectID); err != nil {
			return err
		}
		// FOR SHARE: a concurrent unlink waits for this transaction, so a source
		// is never added to a link that is being revoked.
		repo, err := scanRepository(tx.QueryRowContext(ctx, activeRepositorySQL,
			in.ProjectID, in.GitHubOwner, in.GitHubRepository))
		if err != nil {
			return noRows(err, ErrNotFound, "repository %s/%s is not linked to project %s: link it first with "+
				"heyaira-admin link-repository --project-id %s --github-owner %s --github-repository %s --github-installation-id I",
				in.GitHubOwner, in.GitHubRepository, in.ProjectID, in.ProjectID, in.GitHubOwner, in.GitHubRepository)
		}
		var id string
		err = tx.QueryRowContext(ctx, duplicateSourceSQL, repo.ID, in.Role, in.Path,
			in.CommitSHA, in.TrackingRef, in.Profile).Scan(&id)
		if err == nil {
			at := "branch " + in.TrackingRef
			if in.CommitSHA != "" {
				at = "commit " + in.CommitSHA
			}
			return refused(ErrConflict, "document source %s already allowlists %s %s of %s/%s at %s: "+
				"use it, or revoke it first with heyaira-admin revoke-document-source --source-id %s",
				id, in.Role, in.Path, repo.GitHubOwner, repo.GitHubRepository, at, id)
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		if err := tx.QueryRowContext(ctx, insertDocumentSourceSQL, in.ProjectID, repo.ID, in.Role, in.Path,
			in.CommitSHA, in.TrackingRef, in.Profile, in.FragmentLimit).Scan(&id); err != nil {
			return err
		}
		if s, err = scanDocumentSource(tx.QueryRowContext(ctx, documentSourceSelect+` WHERE s.id = $1`, id)); err != nil {
			return err
		}
		return insertAudit(ctx, tx, AuditEvent{Actor: ActorAdmin, Action: "document_source.add",
			ProjectID: p.ID, AccountID: p.AccountID, Target: s.ID, Outcome: OutcomeOK,
			Details: sourceDetails(s.RepositoryID, s.Role, s.Path, s.CommitSHA, s.TrackingRef, s.Profile, s.FragmentLimit)})
	}))
}

const revokeDocumentSourceSQL = `
	UPDATE document_sources SET revoked_at = now()
	WHERE id = $1 AND revoked_at IS NULL
	RETURNING id`

// RevokeDocumentSource revokes a document source and audits it. An unknown or
// already revoked source is a *RefusedError.
func (db *DB) RevokeDocumentSource(ctx context.Context, sourceID string) (DocumentSource, error) {
	var s DocumentSource
	return result(&s, db.inTx(ctx, "revoke document source", func(ctx context.Context, tx *sql.Tx) (err error) {
		var id string
		if err = tx.QueryRowContext(ctx, revokeDocumentSourceSQL, sourceID).Scan(&id); err != nil {
			return missingOrRevoked(ctx, tx, err, "document_sources", "document source", sourceID)
		}
		if s, err = scanDocumentSource(tx.QueryRowContext(ctx, documentSourceSelect+` WHERE s.id = $1`, id)); err != nil {
			return err
		}
		return insertProjectAudit(ctx, tx, AuditEvent{Actor: ActorAdmin, Action: "document_source.revoke",
			ProjectID: s.ProjectID, Target: s.ID, Outcome: OutcomeOK})
	}))
}

// ListDocumentSources returns every document source of a project, revoked ones
// and those of unlinked repositories included, oldest first. An unknown project
// is a *RefusedError (ErrNotFound).
func (db *DB) ListDocumentSources(ctx context.Context, projectID string) ([]DocumentSource, error) {
	return listIn(ctx, db, "list document sources", inProject(projectID), scanDocumentSource,
		documentSourceSelect+` WHERE s.project_id = $1 ORDER BY s.created_at, s.id`, projectID)
}

// missingOrRevoked explains why a revoke of the row id of table matched no
// row (err is sql.ErrNoRows); any other err is returned as it is.
func missingOrRevoked(ctx context.Context, tx *sql.Tx, err error, table, what, id string) error {
	if !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	var revoked bool
	// table is one of our constants, never input.
	err = tx.QueryRowContext(ctx, `SELECT revoked_at IS NOT NULL FROM `+table+` WHERE id = $1`,
		id).Scan(&revoked)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return refused(ErrNotFound, "%s %s not found", what, id)
	case err != nil:
		return err
	case revoked:
		return refused(ErrConflict, "%s %s is already revoked", what, id)
	default:
		// Matched no row yet is not revoked: a concurrent change; let the admin retry.
		return refused(ErrConflict, "%s %s changed concurrently; try again", what, id)
	}
}

// sourceDetails is the audit record of a new source: identifiers and the
// allowlisted location, never document content.
func sourceDetails(repositoryID, role, path string, commit, tracking, profile *string, limit int) map[string]any {
	d := map[string]any{"role": role, "path": path}
	if repositoryID != "" {
		d["repository_id"] = repositoryID
	}
	if commit != nil {
		d["commit_sha"] = *commit
	}
	if tracking != nil {
		d["tracking_ref"] = *tracking
	}
	if profile != nil {
		d["profile"] = *profile
	}
	if limit != 0 {
		d["fragment_limit"] = limit
	}
	return d
}
