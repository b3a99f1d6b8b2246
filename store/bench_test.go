package store_test

import (
	"context"
	"testing"
	"time"

	"heyaira/store"
	"heyaira/store/storetest"

	"github.com/lib/pq"
)

// The read path's statements, one at a time on an idle database: what a
// git_document_get costs in PostgreSQL before and after the GitHub call.

type benchFixture struct {
	db      *store.DB
	hash    []byte
	project string
	source  string
}

func benchTree(b *testing.B) benchFixture {
	b.Helper()
	ctx := context.Background()
	db := storetest.New(b)
	a, _ := db.CreateAccount(ctx, "Bench")
	p, _ := db.CreateProject(ctx, a.ID, "Bench")
	u, _ := db.CreatePrincipal(ctx, a.ID, "Ada")
	if _, err := db.AddMember(ctx, p.ID, u.ID); err != nil {
		b.Fatal(err)
	}
	if _, err := db.LinkRepository(ctx, store.NewRepository{ProjectID: p.ID, GitHubOwner: "o", GitHubRepository: "r",
		GitHubInstallationID: 7}); err != nil {
		b.Fatal(err)
	}
	s, err := db.AddDocumentSource(ctx, store.NewDocumentSource{ProjectID: p.ID, GitHubOwner: "o", GitHubRepository: "r",
		Role: "runtime", Path: "a.md", CommitSHA: commitSHA, FragmentLimit: 65536})
	if err != nil {
		b.Fatal(err)
	}
	var client, grant string
	db.SQL().QueryRow(`INSERT INTO oauth_clients (client_name, redirect_uris) VALUES ('c', ARRAY['http://127.0.0.1/cb']) RETURNING id`).Scan(&client)
	db.SQL().QueryRow(`INSERT INTO oauth_grants (client_id, principal_id, project_id, scopes) VALUES ($1, $2, $3, $4) RETURNING id`,
		client, u.ID, p.ID, pq.Array([]string{"documents:read"})).Scan(&grant)
	if _, err := db.SQL().Exec(`INSERT INTO oauth_tokens (token_hash, kind, grant_id, scopes, resource, family_id, expires_at)
		VALUES ($1, 'access', $2, $3, 'http://x/mcp', gen_random_uuid(), $4)`, h("bench"), grant,
		pq.Array([]string{"documents:read"}), time.Now().Add(time.Hour)); err != nil {
		b.Fatal(err)
	}
	return benchFixture{db: db, hash: h("bench"), project: p.ID, source: s.ID}
}

func BenchmarkAuthenticate(b *testing.B) {
	f := benchTree(b)
	for b.Loop() {
		if _, err := f.db.Authenticate(context.Background(), f.hash, time.Now()); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkProjectSource(b *testing.B) {
	f := benchTree(b)
	for b.Loop() {
		if _, err := f.db.ProjectSource(context.Background(), f.project, f.source); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAuditDocumentRead is the row a read writes once GitHub answered,
// before the answer leaves the server.
func BenchmarkAuditDocumentRead(b *testing.B) {
	f := benchTree(b)
	e := store.AuditEvent{Actor: "principal:x", Action: "document.read", ProjectID: f.project, Target: f.source,
		Outcome: store.OutcomeOK, Details: map[string]any{"commit_sha": commitSHA, "path": "a.md", "start_byte": 0,
			"end_byte": 65536, "total_bytes": 1 << 20, "sha256": commitSHA + commitSHA[:24], "fragment_sha256": commitSHA + commitSHA[:24]}}
	for b.Loop() {
		if err := f.db.Audit(context.Background(), e); err != nil {
			b.Fatal(err)
		}
	}
}
