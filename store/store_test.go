package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"heyaira/store"
	"heyaira/store/storetest"

	"github.com/lib/pq"
)

func TestMigrateIsIdempotent(t *testing.T) {
	t.Parallel()
	db, err := store.Open(t.Context(), storetest.NewURL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.CheckSchema(t.Context()); !errors.Is(err, store.ErrSchemaMissing) {
		t.Fatalf("CheckSchema before migrate = %v, want ErrSchemaMissing", err)
	}
	schema := storetest.Schema(t)
	for i := range 2 {
		if err := db.Migrate(t.Context(), schema); err != nil {
			t.Fatalf("migrate #%d: %v", i+1, err)
		}
	}
	if err := db.CheckSchema(t.Context()); err != nil {
		t.Fatalf("CheckSchema after migrate = %v", err)
	}
}

func TestOpenRefusesBadURLWithoutEchoingIt(t *testing.T) {
	t.Parallel()
	_, err := store.Open(context.Background(), "postgres://user:s3cret-canary@%zz/db")
	if err == nil {
		t.Fatal("Open accepted a malformed URL")
	}
	if got := err.Error(); strings.Contains(got, "s3cret-canary") {
		t.Errorf("error echoes the DSN: %q", got)
	}
}

// TestSchemaChecks runs inserts that schema.sql must refuse on its own, whatever
// the application code does.
// Row AZ-03 (docs/security-tests.md).
func TestSchemaChecks(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	ctx := t.Context()
	var account, project, repo string
	mustQuery(t, db, `INSERT INTO accounts (name) VALUES ('a') RETURNING id`, &account)
	mustQuery(t, db, `INSERT INTO projects (account_id, name) VALUES ($1, 'p') RETURNING id`, &project, account)
	mustQuery(t, db, `INSERT INTO repositories (project_id, github_owner, github_repository, github_installation_id)
		VALUES ($1, 'h8v6', 'heyaira', 1) RETURNING id`, &repo, project)

	const sha = "0123456789abcdef0123456789abcdef01234567"
	tests := []struct {
		name string
		sql  string
		args []any
	}{
		{"legacy token with documents:read", `INSERT INTO legacy_tokens (project_id, name, token_hash, scopes)
			VALUES ($1, 'n', '\x01', ARRAY['memory:read','documents:read'])`, []any{project}},
		{"legacy token with workflow scope", `INSERT INTO legacy_tokens (project_id, name, token_hash, scopes)
			VALUES ($1, 'n', '\x02', ARRAY['workflows:read'])`, []any{project}},
		{"legacy token with no scope", `INSERT INTO legacy_tokens (project_id, name, token_hash, scopes)
			VALUES ($1, 'n', '\x03', ARRAY[]::text[])`, []any{project}},
		{"both commit and tracking", `INSERT INTO document_sources (project_id, repository_id, role, path, commit_sha, tracking_ref)
			VALUES ($1, $2, 'instruction', 'a.md', $3, 'main')`, []any{project, repo, sha}},
		{"neither commit nor tracking", `INSERT INTO document_sources (project_id, repository_id, role, path)
			VALUES ($1, $2, 'runtime', 'a.md')`, []any{project, repo}},
		{"upper-case commit", `INSERT INTO document_sources (project_id, repository_id, role, path, commit_sha)
			VALUES ($1, $2, 'runtime', 'a.md', upper($3))`, []any{project, repo, sha}},
		{"39-char commit", `INSERT INTO document_sources (project_id, repository_id, role, path, commit_sha)
			VALUES ($1, $2, 'runtime', 'a.md', left($3, 39))`, []any{project, repo, sha}},
		{"tracking for runtime", `INSERT INTO document_sources (project_id, repository_id, role, path, tracking_ref)
			VALUES ($1, $2, 'runtime', 'a.md', 'main')`, []any{project, repo}},
		{"fragment limit 0", `INSERT INTO document_sources (project_id, repository_id, role, path, commit_sha, fragment_limit)
			VALUES ($1, $2, 'runtime', 'a.md', $3, 0)`, []any{project, repo, sha}},
		{"fragment limit 65537", `INSERT INTO document_sources (project_id, repository_id, role, path, commit_sha, fragment_limit)
			VALUES ($1, $2, 'runtime', 'a.md', $3, 65537)`, []any{project, repo, sha}},
		{"unknown role", `INSERT INTO document_sources (project_id, repository_id, role, path, commit_sha)
			VALUES ($1, $2, 'soul', 'a.md', $3)`, []any{project, repo, sha}},
		{"account source outside docs/agents", `INSERT INTO account_sources (account_id, github_owner, github_repository,
			github_installation_id, layer, path, commit_sha) VALUES ($1, 'o', 'r', 1, 'core', 'docs/other/core.md', $2)`, []any{account, sha}},
		{"account source layer soul", `INSERT INTO account_sources (account_id, github_owner, github_repository,
			github_installation_id, layer, path, commit_sha) VALUES ($1, 'o', 'r', 1, 'soul', 'docs/agents/core.md', $2)`, []any{account, sha}},
		{"task with unknown status", `INSERT INTO tasks (project_id, title, status, created_by)
			VALUES ($1, 't', 'blocked', 'x')`, []any{project}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := db.SQL().ExecContext(ctx, tt.sql, tt.args...)
			var pqErr *pq.Error
			if !errors.As(err, &pqErr) || pqErr.Code.Class() != "23" {
				t.Fatalf("insert: err = %v, want an integrity-constraint violation", err)
			}
		})
	}
}

func mustQuery(t *testing.T, db *store.DB, q string, dst any, args ...any) {
	t.Helper()
	if err := db.SQL().QueryRowContext(t.Context(), q, args...).Scan(dst); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// An unreachable database says "store:" once, then the operation,
// the kind and the driver's reason; the sentinel still matches.
func TestUnavailableSaysStoreOnce(t *testing.T) {
	t.Parallel()
	_, err := store.Open(t.Context(), "postgres://127.0.0.1:1/none?sslmode=disable&connect_timeout=2")
	if !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("Open: %v, want ErrUnavailable", err)
	}
	if msg := err.Error(); !strings.HasPrefix(msg, "store: ping: unavailable (") || strings.Count(msg, "store:") != 1 {
		t.Errorf("Open: %q, want one store: prefix then ping: unavailable (…)", msg)
	}
}
