package store

import (
	"context"
	"database/sql"
	"errors"
)

// This file links and unlinks a project's GitHub repositories. A project has at
// most one active link per repository (owner and name compared case-insensitively,
// as GitHub does). Unlinking sets revoked_at; the document sources of the old
// link stay listed but can no longer be read (repository_revoked), and a later
// link of the same repository is a new row that those sources do not point at.

// NewRepository is what LinkRepository needs. The caller has validated the
// GitHub names and identifiers; the schema checks them again.
type NewRepository struct {
	ProjectID            string
	GitHubOwner          string
	GitHubRepository     string
	GitHubInstallationID int64
	GitHubRepositoryID   int64 // 0 when unknown
}

const repositoryColumns = `id, project_id, github_owner, github_repository,
	github_installation_id, github_repository_id, created_at, revoked_at`

const insertRepositorySQL = `
	INSERT INTO repositories (project_id, github_owner, github_repository,
		github_installation_id, github_repository_id)
	VALUES ($1, $2, $3, $4, NULLIF($5, 0))
	RETURNING ` + repositoryColumns

const activeRepositorySQL = `
	SELECT ` + repositoryColumns + ` FROM repositories
	WHERE project_id = $1 AND lower(github_owner) = lower($2)
	  AND lower(github_repository) = lower($3) AND revoked_at IS NULL
	FOR SHARE`

// LinkRepository links a GitHub repository to a project and audits it. An
// unknown project, or a repository that is already linked to the project, is a
// *RefusedError.
func (db *DB) LinkRepository(ctx context.Context, in NewRepository) (Repository, error) {
	var r Repository
	return result(&r, db.inTx(ctx, "link repository", func(ctx context.Context, tx *sql.Tx) error {
		p, err := lockProject(ctx, tx, in.ProjectID)
		if err != nil {
			return err
		}
		if err := advisoryLock(ctx, tx, lockAllowlist, in.ProjectID); err != nil {
			return err
		}
		old, err := scanRepository(tx.QueryRowContext(ctx, activeRepositorySQL,
			in.ProjectID, in.GitHubOwner, in.GitHubRepository))
		switch {
		case err == nil:
			return refused(ErrConflict, "repository %s/%s is already linked to project %s (repository id %s)",
				old.GitHubOwner, old.GitHubRepository, in.ProjectID, old.ID)
		case !errors.Is(err, sql.ErrNoRows):
			return err
		}
		r, err = scanRepository(tx.QueryRowContext(ctx, insertRepositorySQL, in.ProjectID, in.GitHubOwner,
			in.GitHubRepository, in.GitHubInstallationID, in.GitHubRepositoryID))
		if err != nil {
			return err
		}
		details := map[string]any{"github_owner": r.GitHubOwner, "github_repository": r.GitHubRepository,
			"github_installation_id": r.GitHubInstallationID}
		if r.GitHubRepositoryID != nil {
			details["github_repository_id"] = *r.GitHubRepositoryID
		}
		return insertAudit(ctx, tx, AuditEvent{Actor: ActorAdmin, Action: "repository.link",
			ProjectID: p.ID, AccountID: p.AccountID, Target: r.ID, Outcome: OutcomeOK, Details: details})
	}))
}

const unlinkRepositorySQL = `
	UPDATE repositories SET revoked_at = now()
	WHERE project_id = $1 AND lower(github_owner) = lower($2)
	  AND lower(github_repository) = lower($3) AND revoked_at IS NULL
	RETURNING ` + repositoryColumns

// UnlinkRepository revokes a project's active link to a repository and audits
// it. An unknown project, or a repository that is not linked, is a *RefusedError.
func (db *DB) UnlinkRepository(ctx context.Context, projectID, owner, repository string) (Repository, error) {
	var r Repository
	return result(&r, db.inTx(ctx, "unlink repository", func(ctx context.Context, tx *sql.Tx) error {
		p, err := lockProject(ctx, tx, projectID)
		if err != nil {
			return err
		}
		r, err = scanRepository(tx.QueryRowContext(ctx, unlinkRepositorySQL, projectID, owner, repository))
		if err != nil {
			return noRows(err, ErrNotFound, "repository %s/%s is not linked to project %s",
				owner, repository, projectID)
		}
		return insertAudit(ctx, tx, AuditEvent{Actor: ActorAdmin, Action: "repository.unlink",
			ProjectID: p.ID, AccountID: p.AccountID, Target: r.ID, Outcome: OutcomeOK,
			Details: map[string]any{"github_owner": r.GitHubOwner, "github_repository": r.GitHubRepository}})
	}))
}

const listRepositoriesSQL = `
	SELECT ` + repositoryColumns + ` FROM repositories
	WHERE project_id = $1
	ORDER BY created_at, id`

// ListRepositories returns every repository link of a project, revoked ones
// included, oldest first. An unknown project is a *RefusedError (ErrNotFound).
func (db *DB) ListRepositories(ctx context.Context, projectID string) ([]Repository, error) {
	return listIn(ctx, db, "list repositories", inProject(projectID), scanRepository,
		listRepositoriesSQL, projectID)
}

func scanRepository(s sqlScanner) (r Repository, err error) {
	err = s.Scan(&r.ID, &r.ProjectID, &r.GitHubOwner, &r.GitHubRepository,
		&r.GitHubInstallationID, &r.GitHubRepositoryID, &r.CreatedAt, &r.RevokedAt)
	return r, err
}
