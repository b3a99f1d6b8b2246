package store_test

import (
	"errors"
	"testing"
	"time"

	"heyaira/store"

	"github.com/google/go-cmp/cmp"
	"github.com/lib/pq"
)

// TestAuthenticateSourceMatchesTwoQueries pins AuthenticateSource to what
// Authenticate followed by ProjectSource answers, for every kind of token and
// source: the one-statement read path must not change a single answer.
func TestAuthenticateSourceMatchesTwoQueries(t *testing.T) {
	t.Parallel()
	tr := newTree(t)
	ctx := t.Context()
	db := tr.db
	if _, err := db.AddMember(ctx, tr.project.ID, tr.principal.ID); err != nil {
		t.Fatal(err)
	}
	source := func(p store.Project, owner, path string) string {
		t.Helper()
		if _, err := db.LinkRepository(ctx, store.NewRepository{ProjectID: p.ID, GitHubOwner: owner,
			GitHubRepository: "docs", GitHubInstallationID: 7}); err != nil {
			t.Fatal(err)
		}
		s, err := db.AddDocumentSource(ctx, store.NewDocumentSource{ProjectID: p.ID, GitHubOwner: owner,
			GitHubRepository: "docs", Role: "runtime", Path: path, CommitSHA: commitSHA, FragmentLimit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		return s.ID
	}
	own := source(tr.project, "o", "a.md")
	revoked := source(tr.project, "r", "b.md")
	if _, err := db.RevokeDocumentSource(ctx, revoked); err != nil {
		t.Fatal(err)
	}
	otherProject, err := db.CreateProject(ctx, tr.account.ID, "Other")
	if err != nil {
		t.Fatal(err)
	}
	foreign := source(otherProject, "f", "c.md")

	token := func(name string, scopes ...string) []byte {
		t.Helper()
		var client, grant string
		exec := func(q string, dst *string, args ...any) {
			if err := db.SQL().QueryRowContext(ctx, q, args...).Scan(dst); err != nil {
				t.Fatal(err)
			}
		}
		exec(`INSERT INTO oauth_clients (client_name, redirect_uris) VALUES ('c', ARRAY['http://127.0.0.1/cb']) RETURNING id`, &client)
		exec(`INSERT INTO oauth_grants (client_id, principal_id, project_id, scopes) VALUES ($1, $2, $3, $4) RETURNING id`,
			&grant, client, tr.principal.ID, tr.project.ID, pq.Array(scopes))
		if _, err := db.SQL().ExecContext(ctx, `INSERT INTO oauth_tokens (token_hash, kind, grant_id, scopes, resource, family_id, expires_at)
			VALUES ($1, 'access', $2, $3, 'http://x/mcp', gen_random_uuid(), $4)`, h(name), grant, pq.Array(scopes), t0.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		return h(name)
	}
	reader := token("reader", "documents:read", "memory:read")
	noDocs := token("nodocs", "memory:read")
	if _, err := db.IssueLegacyToken(ctx, store.NewLegacyToken{ProjectID: tr.project.ID, Name: "l",
		TokenHash: h("legacy"), Scopes: store.LegacyScopes}); err != nil {
		t.Fatal(err)
	}

	for _, tok := range []struct {
		name string
		hash []byte
	}{{"reader", reader}, {"no documents:read", noDocs}, {"legacy", h("legacy")}, {"unknown", h("nope")}} {
		for _, id := range []string{own, revoked, foreign, missingID} {
			a, src, found, err := db.AuthenticateSource(ctx, tok.hash, t0, id)
			wantA, wantErr := db.Authenticate(ctx, tok.hash, t0)
			if !errors.Is(err, wantErr) && !(errors.Is(err, store.ErrNotFound) && errors.Is(wantErr, store.ErrNotFound)) {
				t.Fatalf("%s/%s: err %v, Authenticate %v", tok.name, id, err, wantErr)
			}
			if wantErr != nil {
				continue
			}
			if diff := cmp.Diff(wantA, a); diff != "" {
				t.Errorf("%s/%s: auth (-want +got):\n%s", tok.name, id, diff)
			}
			wantSrc, srcErr := db.ProjectSource(ctx, wantA.ProjectID, id)
			wantFound := srcErr == nil && tok.name == "reader"
			if found != wantFound {
				t.Errorf("%s/%s: found = %v, want %v (ProjectSource: %v)", tok.name, id, found, wantFound, srcErr)
			}
			if !found {
				wantSrc = store.DocumentSource{}
			}
			if diff := cmp.Diff(wantSrc, src); diff != "" {
				t.Errorf("%s/%s: source (-want +got):\n%s", tok.name, id, diff)
			}
		}
	}
}
