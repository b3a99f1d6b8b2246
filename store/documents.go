package store

import "context"

// documentSourceSelect selects the rows that scanDocumentSource reads: a
// source with its repository's owner, name, installation and revocation.
const documentSourceSelect = `
	SELECT s.id::text, s.project_id::text, s.repository_id::text, r.github_owner, r.github_repository,
	       r.github_installation_id, r.github_repository_id, s.role, s.path, s.commit_sha, s.tracking_ref,
	       s.profile, s.fragment_limit, s.created_at, s.revoked_at, r.revoked_at
	FROM document_sources s JOIN repositories r ON r.id = s.repository_id`

func scanDocumentSource(row sqlScanner) (s DocumentSource, err error) {
	err = row.Scan(sourceDests(&s)...)
	return s, err
}

// sourceDests are the scan destinations of documentSourceSelect's columns, in order.
func sourceDests(s *DocumentSource) []any {
	return []any{&s.ID, &s.ProjectID, &s.RepositoryID, &s.GitHubOwner, &s.GitHubRepository,
		&s.GitHubInstallationID, &s.GitHubRepositoryID, &s.Role, &s.Path, &s.CommitSHA, &s.TrackingRef,
		&s.Profile, &s.FragmentLimit, &s.CreatedAt, &s.RevokedAt, &s.RepositoryRevokedAt}
}

const projectSourceSQL = documentSourceSelect + `
	WHERE s.id = $1 AND s.project_id = $2`

// ProjectSource returns one document source of a project, revoked or not, with
// its repository's state. A source of another project is ErrNotFound, exactly
// like one that does not exist, because the project is the tenant boundary.
func (db *DB) ProjectSource(ctx context.Context, projectID, sourceID string) (DocumentSource, error) {
	var s DocumentSource
	return result(&s, db.scanPrepared(ctx, "project source", sourceDests(&s), projectSourceSQL, sourceID, projectID))
}

const activeSourcesSQL = documentSourceSelect + `
	WHERE s.project_id = $1 AND s.revoked_at IS NULL AND r.revoked_at IS NULL
	ORDER BY s.created_at, s.id`

// ActiveSources returns a project's document sources whose source and
// repository are both unrevoked, oldest first.
func (db *DB) ActiveSources(ctx context.Context, projectID string) ([]DocumentSource, error) {
	return queryAll(ctx, db, "active sources", scanDocumentSource, activeSourcesSQL, projectID)
}
