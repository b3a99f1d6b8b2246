package store

import "time"

// Account is a customer account: the owner of projects, principals and
// account-wide instruction sources.
type Account struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
}

// Project is the tenant boundary: every tool works inside exactly one project.
type Project struct {
	ID        string    `json:"id"`
	AccountID string    `json:"account_id"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
}

// Principal is a person (or agent owner) who signs in and is a member of projects.
type Principal struct {
	ID        string    `json:"id"`
	AccountID string    `json:"account_id"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
}

// Repository is a project's link to one GitHub repository.
type Repository struct {
	ID                   string     `json:"id"`
	ProjectID            string     `json:"project_id"`
	GitHubOwner          string     `json:"github_owner"`
	GitHubRepository     string     `json:"github_repository"`
	GitHubInstallationID int64      `json:"github_installation_id"`
	GitHubRepositoryID   *int64     `json:"github_repository_id"`
	CreatedAt            time.Time  `json:"created_at"`
	RevokedAt            *time.Time `json:"revoked_at"`
}

// DocumentSource is one allowlisted document of a project. Exactly one of
// CommitSHA (pinned) and TrackingRef (a branch resolved at dispatch) is set.
type DocumentSource struct {
	ID                   string     `json:"source_id"`
	ProjectID            string     `json:"project_id"`
	RepositoryID         string     `json:"repository_id"`
	GitHubOwner          string     `json:"github_owner"`
	GitHubRepository     string     `json:"github_repository"`
	GitHubInstallationID int64      `json:"github_installation_id"`
	GitHubRepositoryID   *int64     `json:"github_repository_id"`
	Role                 string     `json:"role"`
	Path                 string     `json:"path"`
	CommitSHA            *string    `json:"commit_sha"`
	TrackingRef          *string    `json:"tracking_ref"`
	Profile              *string    `json:"profile"`
	FragmentLimit        int        `json:"fragment_limit"`
	CreatedAt            time.Time  `json:"created_at"`
	RevokedAt            *time.Time `json:"revoked_at"`
	RepositoryRevokedAt  *time.Time `json:"repository_revoked_at"`
}

// AccountSource is an account-wide instruction source under docs/agents/.
type AccountSource struct {
	ID                   string     `json:"source_id"`
	AccountID            string     `json:"account_id"`
	GitHubOwner          string     `json:"github_owner"`
	GitHubRepository     string     `json:"github_repository"`
	GitHubInstallationID int64      `json:"github_installation_id"`
	Layer                string     `json:"layer"`
	Path                 string     `json:"path"`
	CommitSHA            *string    `json:"commit_sha"`
	TrackingRef          *string    `json:"tracking_ref"`
	CreatedAt            time.Time  `json:"created_at"`
	RevokedAt            *time.Time `json:"revoked_at"`
}

// LegacyToken is a static project token from before OAuth (memory/task scopes only).
type LegacyToken struct {
	ID        string     `json:"id"`
	ProjectID string     `json:"project_id"`
	Name      string     `json:"name"`
	Scopes    []string   `json:"scopes"`
	CreatedAt time.Time  `json:"created_at"`
	ExpiresAt *time.Time `json:"expires_at"` // nil: never expires
	RevokedAt *time.Time `json:"revoked_at"`
	// Reissue is true for a token issued before tokens carried the server's
	// MAC: the server refuses it unseen, so it must be issued again.
	Reissue bool `json:"reissue"`
}

// AuditEvent is one row of the audit log. It never holds content or secrets.
type AuditEvent struct {
	ID        int64          `json:"id"`
	At        time.Time      `json:"at"`
	Actor     string         `json:"actor"`
	Action    string         `json:"action"`
	ProjectID string         `json:"project_id,omitempty"`
	AccountID string         `json:"account_id,omitempty"`
	Target    string         `json:"target"`
	Outcome   string         `json:"outcome"`
	Details   map[string]any `json:"details,omitempty"`
}
