package store

import (
	"context"
	"database/sql"
)

// documentSourceColumns is the select list that scanSourceRow reads.
const documentSourceColumns = `
	s.id::text, s.project_id::text, s.repository_id::text, r.github_owner, r.github_repository,
	r.github_installation_id, r.github_repository_id, s.role, s.path, s.commit_sha, s.tracking_ref,
	s.profile, s.fragment_limit, s.created_at, s.revoked_at, r.revoked_at`

func scanSourceRow(row sqlScanner) (DocumentSource, error) {
	var s DocumentSource
	err := row.Scan(sourceDests(&s)...)
	return s, err
}

// sourceDests are the scan destinations of documentSourceColumns, in order.
func sourceDests(s *DocumentSource) []any {
	return []any{&s.ID, &s.ProjectID, &s.RepositoryID, &s.GitHubOwner, &s.GitHubRepository,
		&s.GitHubInstallationID, &s.GitHubRepositoryID, &s.Role, &s.Path, &s.CommitSHA, &s.TrackingRef,
		&s.Profile, &s.FragmentLimit, &s.CreatedAt, &s.RevokedAt, &s.RepositoryRevokedAt}
}

const projectSourceSQL = `
	SELECT` + documentSourceColumns + `
	FROM document_sources s JOIN repositories r ON r.id = s.repository_id
	WHERE s.id = $1 AND s.project_id = $2`

// ProjectSource returns one document source of a project, revoked or not, with
// its repository's state. A source of another project is ErrNotFound, exactly
// like one that does not exist, because the project is the tenant boundary.
func (db *DB) ProjectSource(ctx context.Context, projectID, sourceID string) (DocumentSource, error) {
	ctx, cancel := context.WithTimeout(ctx, QueryTimeout)
	defer cancel()
	row, err := db.queryRow(ctx, projectSourceSQL, sourceID, projectID)
	if err != nil {
		return DocumentSource{}, wrap("project source", err)
	}
	s, err := scanSourceRow(row)
	return s, wrap("project source", err)
}

const activeSourcesSQL = `
	SELECT` + documentSourceColumns + `
	FROM document_sources s JOIN repositories r ON r.id = s.repository_id
	WHERE s.project_id = $1 AND s.revoked_at IS NULL AND r.revoked_at IS NULL
	ORDER BY s.created_at, s.id`

// ActiveSources returns a project's document sources whose source and
// repository are both unrevoked, oldest first.
func (db *DB) ActiveSources(ctx context.Context, projectID string) ([]DocumentSource, error) {
	ctx, cancel := context.WithTimeout(ctx, QueryTimeout)
	defer cancel()
	rows, err := db.sql.QueryContext(ctx, activeSourcesSQL, projectID)
	if err != nil {
		return nil, wrap("active sources", err)
	}
	return collectSources(rows)
}

func collectSources(rows *sql.Rows) ([]DocumentSource, error) {
	defer rows.Close()
	var out []DocumentSource
	for rows.Next() {
		s, err := scanSourceRow(rows)
		if err != nil {
			return nil, wrap("scan source", err)
		}
		out = append(out, s)
	}
	return out, wrap("scan sources", rows.Err())
}
