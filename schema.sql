-- HeyAira F1 schema. Idempotent: every statement may run again on a migrated
-- database without changing it. `heyaira-admin migrate` applies the whole file in
-- one transaction. Changes are new idempotent statements appended at the end.
--
-- Rules that hold for every table:
--   * identifiers are UUIDs (gen_random_uuid, built into PostgreSQL 13+);
--   * secrets (tokens, codes, sign-in links, session ids) are stored only as
--     SHA-256 hashes (bytea, 32 bytes), never in the clear;
--   * revocation is a timestamp (revoked_at), never a delete; the only rows
--     ever deleted are expired credentials, 90 days after their expiry
--     (store/purge.go), the memories an agent deletes (memory_delete), and
--     the project_members row that remove-member ends (its audit row keeps
--     the membership's history).

-- Serialise concurrent migrations: the second waits for the first to commit.
SELECT pg_advisory_xact_lock(7241690013);

CREATE TABLE IF NOT EXISTS heyaira_schema (
	version    integer PRIMARY KEY,
	applied_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE IF NOT EXISTS accounts (
	id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
	name       text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
	created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE IF NOT EXISTS projects (
	id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
	account_id uuid NOT NULL REFERENCES accounts (id),
	name       text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
	created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS projects_account_idx ON projects (account_id);

CREATE TABLE IF NOT EXISTS principals (
	id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
	account_id uuid NOT NULL REFERENCES accounts (id),
	name       text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
	created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS principals_account_idx ON principals (account_id);

CREATE TABLE IF NOT EXISTS project_members (
	project_id   uuid NOT NULL REFERENCES projects (id),
	principal_id uuid NOT NULL REFERENCES principals (id),
	created_at   timestamptz NOT NULL DEFAULT now(),
	PRIMARY KEY (project_id, principal_id)
);
CREATE INDEX IF NOT EXISTS project_members_principal_idx ON project_members (principal_id);

-- A project's link to one GitHub repository. Unlinking sets revoked_at; a later
-- link of the same repository is a new row.
CREATE TABLE IF NOT EXISTS repositories (
	id                     uuid PRIMARY KEY DEFAULT gen_random_uuid(),
	project_id             uuid NOT NULL REFERENCES projects (id),
	github_owner           text NOT NULL CHECK (github_owner ~ '^[A-Za-z0-9][A-Za-z0-9_-]{0,38}$'),
	github_repository      text NOT NULL CHECK (github_repository ~ '^[A-Za-z0-9._-]{1,100}$'
	                                            AND github_repository NOT IN ('.', '..')),
	github_installation_id bigint NOT NULL CHECK (github_installation_id > 0),
	github_repository_id   bigint NULL CHECK (github_repository_id > 0),
	created_at             timestamptz NOT NULL DEFAULT now(),
	revoked_at             timestamptz NULL,
	UNIQUE (id, project_id)
);
CREATE UNIQUE INDEX IF NOT EXISTS repositories_active_idx
	ON repositories (project_id, lower(github_owner), lower(github_repository))
	WHERE revoked_at IS NULL;

-- An allowlisted document: exactly one of commit_sha (pinned) or tracking_ref
-- (a branch, resolved only at workflow dispatch, role instruction only).
CREATE TABLE IF NOT EXISTS document_sources (
	id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
	project_id     uuid NOT NULL REFERENCES projects (id),
	repository_id  uuid NOT NULL,
	role           text NOT NULL CHECK (role IN ('runtime', 'reference', 'instruction')),
	path           text NOT NULL CHECK (octet_length(path) BETWEEN 1 AND 1024),
	commit_sha     text NULL CHECK (commit_sha ~ '^[0-9a-f]{40}$'),
	tracking_ref   text NULL CHECK (octet_length(tracking_ref) BETWEEN 1 AND 255
	                                AND tracking_ref NOT LIKE 'refs/%'),
	profile        text NULL CHECK (profile ~ '^[a-z0-9][a-z0-9_-]{0,63}$'),
	fragment_limit integer NOT NULL DEFAULT 65536 CHECK (fragment_limit BETWEEN 1 AND 65536),
	created_at     timestamptz NOT NULL DEFAULT now(),
	revoked_at     timestamptz NULL,
	-- The repository must belong to the same project as the source.
	FOREIGN KEY (repository_id, project_id) REFERENCES repositories (id, project_id),
	CHECK ((commit_sha IS NULL) <> (tracking_ref IS NULL)),
	CHECK (tracking_ref IS NULL OR role = 'instruction')
);
CREATE INDEX IF NOT EXISTS document_sources_project_idx ON document_sources (project_id);
CREATE INDEX IF NOT EXISTS document_sources_repository_idx ON document_sources (repository_id);

-- Account-wide instruction sources (core and mode layers of catalog profiles).
-- Their role is always instruction; they grant no standalone document access.
CREATE TABLE IF NOT EXISTS account_sources (
	id                     uuid PRIMARY KEY DEFAULT gen_random_uuid(),
	account_id             uuid NOT NULL REFERENCES accounts (id),
	github_owner           text NOT NULL CHECK (github_owner ~ '^[A-Za-z0-9][A-Za-z0-9_-]{0,38}$'),
	github_repository      text NOT NULL CHECK (github_repository ~ '^[A-Za-z0-9._-]{1,100}$'
	                                            AND github_repository NOT IN ('.', '..')),
	github_installation_id bigint NOT NULL CHECK (github_installation_id > 0),
	layer                  text NOT NULL CHECK (layer IN ('core', 'mode:worker', 'mode:verifier')),
	path                   text NOT NULL CHECK (octet_length(path) BETWEEN 13 AND 1024
	                                            AND left(path, 12) = 'docs/agents/'),
	commit_sha             text NULL CHECK (commit_sha ~ '^[0-9a-f]{40}$'),
	tracking_ref           text NULL CHECK (octet_length(tracking_ref) BETWEEN 1 AND 255
	                                        AND tracking_ref NOT LIKE 'refs/%'),
	created_at             timestamptz NOT NULL DEFAULT now(),
	revoked_at             timestamptz NULL,
	CHECK ((commit_sha IS NULL) <> (tracking_ref IS NULL))
);
CREATE INDEX IF NOT EXISTS account_sources_account_idx ON account_sources (account_id);

-- OAuth: dynamically registered public clients.
CREATE TABLE IF NOT EXISTS oauth_clients (
	id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
	client_name   text NOT NULL DEFAULT '' CHECK (octet_length(client_name) <= 200),
	redirect_uris text[] NOT NULL CHECK (cardinality(redirect_uris) BETWEEN 1 AND 10),
	metadata      jsonb NOT NULL DEFAULT '{}',
	created_at    timestamptz NOT NULL DEFAULT now()
);

-- A grant is what a principal approved for one client in one project. It is
-- never silently expanded: a new scope needs a new consent.
CREATE TABLE IF NOT EXISTS oauth_grants (
	id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
	client_id    uuid NOT NULL REFERENCES oauth_clients (id),
	principal_id uuid NOT NULL REFERENCES principals (id),
	project_id   uuid NOT NULL REFERENCES projects (id),
	scopes       text[] NOT NULL CHECK (scopes <@ ARRAY['memory:read', 'memory:write', 'tasks:read',
	                        'tasks:write', 'documents:read', 'workflows:read', 'workflows:write']::text[]),
	created_at   timestamptz NOT NULL DEFAULT now(),
	updated_at   timestamptz NOT NULL DEFAULT now(),
	revoked_at   timestamptz NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS oauth_grants_active_idx
	ON oauth_grants (client_id, principal_id, project_id) WHERE revoked_at IS NULL;
CREATE INDEX IF NOT EXISTS oauth_grants_project_idx ON oauth_grants (project_id);

-- A pending authorization request, stored between the authorize GET and the
-- consent POST so that nothing on the consent form is trusted.
CREATE TABLE IF NOT EXISTS oauth_requests (
	id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
	handle_hash    bytea NOT NULL UNIQUE,   -- SHA-256 of the opaque request handle
	client_id      uuid NOT NULL REFERENCES oauth_clients (id),
	redirect_uri   text NOT NULL,
	code_challenge text NOT NULL,
	scopes         text[] NOT NULL,
	resource       text NOT NULL,
	state          text NULL,
	expires_at     timestamptz NOT NULL,
	used_at        timestamptz NULL,
	created_at     timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE IF NOT EXISTS oauth_codes (
	id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
	code_hash      bytea NOT NULL UNIQUE,   -- SHA-256 of the authorization code
	client_id      uuid NOT NULL REFERENCES oauth_clients (id),
	grant_id       uuid NOT NULL REFERENCES oauth_grants (id),
	redirect_uri   text NOT NULL,
	code_challenge text NOT NULL,
	scopes         text[] NOT NULL,
	resource       text NOT NULL,
	expires_at     timestamptz NOT NULL,
	used_at        timestamptz NULL,
	created_at     timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE IF NOT EXISTS oauth_tokens (
	id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
	token_hash bytea NOT NULL UNIQUE,       -- SHA-256 of the opaque token
	kind       text NOT NULL CHECK (kind IN ('access', 'refresh')),
	grant_id   uuid NOT NULL REFERENCES oauth_grants (id),
	code_id    uuid NULL REFERENCES oauth_codes (id),
	scopes     text[] NOT NULL,
	resource   text NOT NULL,
	family_id  uuid NOT NULL,
	expires_at timestamptz NOT NULL,
	used_at    timestamptz NULL,            -- refresh tokens: set when rotated
	created_at timestamptz NOT NULL DEFAULT now(),
	revoked_at timestamptz NULL
);
CREATE INDEX IF NOT EXISTS oauth_tokens_grant_idx ON oauth_tokens (grant_id);
CREATE INDEX IF NOT EXISTS oauth_tokens_family_idx ON oauth_tokens (family_id);
CREATE INDEX IF NOT EXISTS oauth_tokens_code_idx ON oauth_tokens (code_id);

CREATE TABLE IF NOT EXISTS signin_links (
	id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
	token_hash   bytea NOT NULL UNIQUE,     -- SHA-256 of the one-time link secret
	principal_id uuid NOT NULL REFERENCES principals (id),
	expires_at   timestamptz NOT NULL,
	used_at      timestamptz NULL,
	created_at   timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE IF NOT EXISTS browser_sessions (
	id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
	token_hash   bytea NOT NULL UNIQUE,     -- SHA-256 of the session cookie value
	principal_id uuid NOT NULL REFERENCES principals (id),
	expires_at   timestamptz NOT NULL,
	created_at   timestamptz NOT NULL DEFAULT now(),
	revoked_at   timestamptz NULL
);

-- Static project tokens from before OAuth. They keep only the memory/task
-- scopes; the CHECK makes documents:read and workflow scopes impossible.
CREATE TABLE IF NOT EXISTS legacy_tokens (
	id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
	project_id uuid NOT NULL REFERENCES projects (id),
	name       text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
	token_hash bytea NOT NULL UNIQUE,       -- SHA-256 of the token
	scopes     text[] NOT NULL CHECK (cardinality(scopes) > 0 AND scopes <@
	                        ARRAY['memory:read', 'memory:write', 'tasks:read', 'tasks:write']::text[]),
	created_at timestamptz NOT NULL DEFAULT now(),
	revoked_at timestamptz NULL
);
CREATE INDEX IF NOT EXISTS legacy_tokens_project_idx ON legacy_tokens (project_id);

CREATE TABLE IF NOT EXISTS memories (
	project_id uuid NOT NULL REFERENCES projects (id),
	key        text NOT NULL CHECK (key ~ '^[A-Za-z0-9._/-]{1,200}$'),
	content    text NOT NULL CHECK (octet_length(content) <= 65536),
	created_at timestamptz NOT NULL DEFAULT now(),
	updated_at timestamptz NOT NULL DEFAULT now(),
	PRIMARY KEY (project_id, key)
);

CREATE TABLE IF NOT EXISTS tasks (
	id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
	project_id uuid NOT NULL REFERENCES projects (id),
	title      text NOT NULL CHECK (octet_length(title) BETWEEN 1 AND 200),
	body       text NOT NULL DEFAULT '' CHECK (octet_length(body) <= 65536),
	status     text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'in_progress', 'done', 'cancelled')),
	created_by text NOT NULL,
	created_at timestamptz NOT NULL DEFAULT now(),
	updated_at timestamptz NOT NULL DEFAULT now(),
	UNIQUE (id, project_id)
);
CREATE INDEX IF NOT EXISTS tasks_project_idx ON tasks (project_id, id);

-- A frozen, replayable profile assembly for one task.
CREATE TABLE IF NOT EXISTS workflows (
	id                 uuid PRIMARY KEY DEFAULT gen_random_uuid(),
	project_id         uuid NOT NULL REFERENCES projects (id),
	task_id            uuid NOT NULL,
	profile            text NOT NULL,
	mode               text NOT NULL CHECK (mode IN ('worker', 'verifier')),
	parent_workflow_id uuid NULL REFERENCES workflows (id),
	contract           jsonb NOT NULL,
	created_by         text NOT NULL,
	created_at         timestamptz NOT NULL DEFAULT now(),
	FOREIGN KEY (task_id, project_id) REFERENCES tasks (id, project_id)
);
CREATE INDEX IF NOT EXISTS workflows_project_idx ON workflows (project_id);

-- Every admin change and every document read. Never content, never secrets.
CREATE TABLE IF NOT EXISTS audit_events (
	id         bigserial PRIMARY KEY,
	at         timestamptz NOT NULL DEFAULT now(),
	actor      text NOT NULL,               -- "admin", "principal:<id>", "legacy:<id>"
	action     text NOT NULL,               -- e.g. "document_source.add", "document.read"
	project_id uuid NULL,
	account_id uuid NULL,
	target     text NOT NULL DEFAULT '',    -- id of the thing acted on
	outcome    text NOT NULL,               -- "ok" or a stable error code
	details    jsonb NOT NULL DEFAULT '{}'
);
CREATE INDEX IF NOT EXISTS audit_events_project_idx ON audit_events (project_id, at);

-- The janitor (store/purge.go) deletes expired credentials in batches.
CREATE INDEX IF NOT EXISTS oauth_requests_expires_idx ON oauth_requests (expires_at);
CREATE INDEX IF NOT EXISTS oauth_codes_expires_idx ON oauth_codes (expires_at);
CREATE INDEX IF NOT EXISTS oauth_tokens_expires_idx ON oauth_tokens (expires_at);
CREATE INDEX IF NOT EXISTS signin_links_expires_idx ON signin_links (expires_at);
CREATE INDEX IF NOT EXISTS browser_sessions_expires_idx ON browser_sessions (expires_at);

-- Administrator lifecycle (remove-member, disable-principal, revoke-sessions).
-- A disabled principal can neither sign in nor authorize; enabling clears the
-- timestamp and revives nothing. A sign-in link revoked before use (when its
-- principal is disabled) never redeems, even after the principal is enabled.
ALTER TABLE principals ADD COLUMN IF NOT EXISTS disabled_at timestamptz NULL;
ALTER TABLE signin_links ADD COLUMN IF NOT EXISTS revoked_at timestamptz NULL;
CREATE INDEX IF NOT EXISTS oauth_grants_principal_idx ON oauth_grants (principal_id);
CREATE INDEX IF NOT EXISTS browser_sessions_principal_idx ON browser_sessions (principal_id);
CREATE INDEX IF NOT EXISTS signin_links_principal_idx ON signin_links (principal_id);
-- Tenant limits (fairness and quotas). One optional row per project: NULL
-- columns take the server's defaults (store/limits.go). An administrator sets
-- them with heyaira-admin set-project-limits.
CREATE TABLE IF NOT EXISTS project_limits (
	project_id             uuid PRIMARY KEY REFERENCES projects (id),
	github_requests_hourly integer NULL CHECK (github_requests_hourly BETWEEN 1 AND 1000000),
	memory_entries         integer NULL CHECK (memory_entries BETWEEN 0 AND 10000000),
	memory_bytes           bigint NULL CHECK (memory_bytes BETWEEN 0 AND 1099511627776),
	tasks                  integer NULL CHECK (tasks BETWEEN 0 AND 10000000),
	workflows              integer NULL CHECK (workflows BETWEEN 0 AND 10000000),
	updated_at             timestamptz NOT NULL DEFAULT now()
);
-- Each pending authorization request names the signed-in principal it was
-- made for, so that their number can be bounded per principal.
ALTER TABLE oauth_requests ADD COLUMN IF NOT EXISTS principal_id uuid NULL REFERENCES principals (id);
CREATE INDEX IF NOT EXISTS oauth_requests_principal_idx ON oauth_requests (principal_id, expires_at);
CREATE INDEX IF NOT EXISTS oauth_requests_client_idx ON oauth_requests (client_id);
CREATE INDEX IF NOT EXISTS oauth_clients_created_idx ON oauth_clients (created_at);
-- Client ID Metadata Documents (store/cimd_clients.go): a client named by
-- the URL of its metadata document is an oauth_clients row holding the URL,
-- the document's name and redirect URIs, and when it must be fetched again.
ALTER TABLE oauth_clients ADD COLUMN IF NOT EXISTS metadata_url text NULL
	CHECK (octet_length(metadata_url) <= 512 AND metadata_url LIKE 'https://%');
ALTER TABLE oauth_clients ADD COLUMN IF NOT EXISTS fetched_at timestamptz NULL;
ALTER TABLE oauth_clients ADD COLUMN IF NOT EXISTS fresh_until timestamptz NULL;
CREATE UNIQUE INDEX IF NOT EXISTS oauth_clients_metadata_url_idx
	ON oauth_clients (metadata_url) WHERE metadata_url IS NOT NULL;

-- Whether an authorization request carried redirect_uri: then the token
-- request must carry it too (RFC 6749 §4.1.3). Rows from before default to
-- true, the stricter reading.
ALTER TABLE oauth_requests ADD COLUMN IF NOT EXISTS redirect_uri_sent boolean NOT NULL DEFAULT true;
ALTER TABLE oauth_codes ADD COLUMN IF NOT EXISTS redirect_uri_sent boolean NOT NULL DEFAULT true;

INSERT INTO heyaira_schema (version) VALUES (1) ON CONFLICT (version) DO NOTHING;

-- Legacy tokens may expire (issue-legacy-token --expires-in). NULL: no
-- expiry, as every token issued before this column. authenticateSQL refuses
-- a token at or after its expires_at.
ALTER TABLE legacy_tokens ADD COLUMN IF NOT EXISTS expires_at timestamptz NULL
	CHECK (expires_at > created_at);

-- A legacy token carries a MAC under the server's key since secrets became
-- self-authenticating; one issued before no longer works. Rows that exist
-- when the column is added are those (signed = false: heyaira-admin
-- list-legacy-reissue lists them); every row inserted after is signed.
ALTER TABLE legacy_tokens ADD COLUMN IF NOT EXISTS signed boolean NOT NULL DEFAULT false;
ALTER TABLE legacy_tokens ALTER COLUMN signed SET DEFAULT true;

-- Besides the deletions listed at the top, heyaira-admin prune-audit
-- (store/audit_retention.go) deletes audit_events rows older than a cutoff,
-- only after exporting them, and records it in an audit.prune row.
