package store_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"heyaira/store"

	"github.com/google/go-cmp/cmp"
	"github.com/lib/pq"
)

// TestAuthorizeReadMatchesTwoQueries pins AuthorizeRead to what Authenticate
// followed by ProjectSource answers, for every kind of token and source (the
// one-statement read path must not change a single answer), and checks the
// audit row it writes in the same statement: one row exactly when the token
// may read documents here, with the outcome the tool answers, and none for
// a token refused 401 or 403.
func TestAuthorizeReadMatchesTwoQueries(t *testing.T) {
	t.Parallel()
	tr := newTree(t)
	ctx := t.Context()
	db := tr.db
	if _, err := db.AddMember(ctx, tr.project.ID, tr.principal.ID); err != nil {
		t.Fatal(err)
	}
	source := func(p store.Project, owner, path, commit string) string {
		t.Helper()
		if _, err := db.LinkRepository(ctx, store.NewRepository{ProjectID: p.ID, GitHubOwner: owner,
			GitHubRepository: "docs", GitHubInstallationID: 7}); err != nil {
			t.Fatal(err)
		}
		ns := store.NewDocumentSource{ProjectID: p.ID, GitHubOwner: owner,
			GitHubRepository: "docs", Role: "runtime", Path: path, CommitSHA: commit, FragmentLimit: 1000}
		if commit == "" {
			ns.Role, ns.TrackingRef = "instruction", "main"
		}
		s, err := db.AddDocumentSource(ctx, ns)
		if err != nil {
			t.Fatal(err)
		}
		return s.ID
	}
	own := source(tr.project, "o", "a.md", commitSHA)
	revoked := source(tr.project, "r", "b.md", commitSHA)
	if _, err := db.RevokeDocumentSource(ctx, revoked); err != nil {
		t.Fatal(err)
	}
	unlinked := source(tr.project, "u", "d.md", commitSHA)
	if _, err := db.UnlinkRepository(ctx, tr.project.ID, "u", "docs"); err != nil {
		t.Fatal(err)
	}
	otherProject, err := db.CreateProject(ctx, tr.account.ID, "Other")
	if err != nil {
		t.Fatal(err)
	}
	foreign := source(otherProject, "f", "c.md", commitSHA)
	tracking := source(tr.project, "t", "e.md", "")

	token := func(name, resource string, scopes ...string) []byte {
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
			VALUES ($1, 'access', $2, $3, $4, gen_random_uuid(), $5)`, h(name), grant, pq.Array(scopes), resource, t0.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		return h(name)
	}
	const resource = "http://x/mcp"
	reader := token("reader", resource, "documents:read", "memory:read")
	noDocs := token("nodocs", resource, "memory:read")
	elsewhere := token("elsewhere", "http://other/mcp", "documents:read")
	if _, err := db.IssueLegacyToken(ctx, store.NewLegacyToken{ProjectID: tr.project.ID, Name: "l",
		TokenHash: h("legacy"), Scopes: store.LegacyScopes}); err != nil {
		t.Fatal(err)
	}
	rows := func() int {
		var n int
		if err := db.SQL().QueryRowContext(ctx, `SELECT count(*) FROM audit_events WHERE action = 'document.read'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	wantOutcome := map[string]string{own: "ok", revoked: "source_revoked", unlinked: "repository_revoked",
		tracking: "source_requires_dispatch", foreign: "source_not_found", missingID: "source_not_found"}
	seen := map[string]bool{}

	for _, tok := range []struct {
		name string
		hash []byte
	}{{"reader", reader}, {"no documents:read", noDocs}, {"another audience", elsewhere}, {"legacy", h("legacy")}, {"unknown", h("nope")}} {
		for _, id := range []string{own, revoked, unlinked, tracking, foreign, missingID} {
			before := rows()
			a, r, err := db.AuthorizeRead(ctx, tok.hash, t0, resource, store.ReadIntent{SourceID: id, StartByte: 7, MaxBytes: 5000})
			wantA, wantErr := db.Authenticate(ctx, tok.hash, t0)
			if !errors.Is(err, wantErr) && !(errors.Is(err, store.ErrNotFound) && errors.Is(wantErr, store.ErrNotFound)) {
				t.Fatalf("%s/%s: err %v, Authenticate %v", tok.name, id, err, wantErr)
			}
			wrote := rows() - before
			if wantErr != nil {
				if wrote != 0 {
					t.Errorf("%s/%s: %d audit rows for a refused token", tok.name, id, wrote)
				}
				continue
			}
			if diff := cmp.Diff(wantA, a); diff != "" {
				t.Errorf("%s/%s: auth (-want +got):\n%s", tok.name, id, diff)
			}
			wantSrc, srcErr := db.ProjectSource(ctx, wantA.ProjectID, id)
			reads := tok.name == "reader"
			if wantFound := srcErr == nil && reads; r.Found != wantFound {
				t.Errorf("%s/%s: found = %v, want %v (ProjectSource: %v)", tok.name, id, r.Found, wantFound, srcErr)
			}
			if !r.Found {
				wantSrc = store.DocumentSource{}
			}
			if diff := cmp.Diff(wantSrc, r.Source); diff != "" {
				t.Errorf("%s/%s: source (-want +got):\n%s", tok.name, id, diff)
			}
			if !reads {
				if wrote != 0 || r.AuditID != 0 {
					t.Errorf("%s/%s: %d audit rows (id %d) for a token that may not read documents here", tok.name, id, wrote, r.AuditID)
				}
				continue
			}
			if wrote != 1 || r.AuditID == 0 || r.Outcome != wantOutcome[id] {
				t.Errorf("%s/%s: %d rows, id %d, outcome %q; want 1 row, %q", tok.name, id, wrote, r.AuditID, r.Outcome, wantOutcome[id])
				continue
			}
			seen[r.Outcome] = true
			e := auditRow(t, db, r.AuditID)
			want := store.AuditEvent{ID: r.AuditID, At: e.At, Actor: store.ActorPrincipal(tr.principal.ID), Action: "document.read",
				ProjectID: tr.project.ID, Target: id, Outcome: r.Outcome, Details: map[string]any{}}
			switch r.Outcome {
			case "ok":
				want.Details = map[string]any{"path": "a.md", "commit_sha": commitSHA, "start_byte": 7.0, "max_bytes": 1000.0}
			case "source_revoked":
				want.Details = map[string]any{"path": "b.md", "commit_sha": commitSHA}
			case "repository_revoked":
				want.Details = map[string]any{"path": "d.md", "commit_sha": commitSHA}
			case "source_requires_dispatch":
				want.Details = map[string]any{"path": "e.md"}
			}
			if diff := cmp.Diff(want, e); diff != "" {
				t.Errorf("%s/%s: audit row (-want +got):\n%s", tok.name, id, diff)
			}
		}
	}

	// A refusal decided from the arguments, and a cursor of another project,
	// actor, commit or path: one row each, with the refusal, naming no path
	// before the source is reached.
	actor := store.ActorPrincipal(tr.principal.ID)
	good := store.ReadCursor{Project: tr.project.ID, Principal: actor, Commit: commitSHA, Path: "a.md", FileSHA256: "ab"}
	for name, tt := range map[string]struct {
		in      store.ReadIntent
		outcome string
		details map[string]any
	}{
		"refusal from the arguments": {store.ReadIntent{Refusal: "cursor_expired", SourceID: own}, "cursor_expired", map[string]any{}},
		"malformed id":               {store.ReadIntent{Refusal: "source_not_found"}, "source_not_found", map[string]any{}},
		"continuation": {store.ReadIntent{SourceID: own, Cursor: &good, StartByte: 1000}, "ok",
			map[string]any{"path": "a.md", "commit_sha": commitSHA, "start_byte": 1000.0, "max_bytes": 1000.0, "sha256": "ab"}},
		"cursor of another project": {store.ReadIntent{SourceID: own, Cursor: &store.ReadCursor{Project: otherProject.ID,
			Principal: actor, Commit: commitSHA, Path: "a.md"}}, "cursor_invalid", map[string]any{}},
		"cursor of another actor": {store.ReadIntent{SourceID: own, Cursor: &store.ReadCursor{Project: tr.project.ID,
			Principal: "principal:" + missingID, Commit: commitSHA, Path: "a.md"}}, "cursor_invalid", map[string]any{}},
		"cursor of another commit": {store.ReadIntent{SourceID: own, Cursor: &store.ReadCursor{Project: tr.project.ID,
			Principal: actor, Commit: "f" + commitSHA[1:], Path: "a.md"}}, "cursor_invalid", map[string]any{"path": "a.md", "commit_sha": commitSHA}},
		"cursor of another path": {store.ReadIntent{SourceID: own, Cursor: &store.ReadCursor{Project: tr.project.ID,
			Principal: actor, Commit: commitSHA, Path: "b.md"}}, "cursor_invalid", map[string]any{"path": "a.md", "commit_sha": commitSHA}},
	} {
		_, r, err := db.AuthorizeRead(ctx, reader, t0, resource, tt.in)
		if err != nil || r.Outcome != tt.outcome || r.AuditID == 0 {
			t.Errorf("%s: outcome %q, row %d, %v; want %q", name, r.Outcome, r.AuditID, err, tt.outcome)
			continue
		}
		seen[r.Outcome] = true
		if e := auditRow(t, db, r.AuditID); e.Outcome != tt.outcome || e.Target != tt.in.SourceID || !cmp.Equal(e.Details, tt.details) {
			t.Errorf("%s: row %+v, want outcome %q, target %q, details %v", name, e, tt.outcome, tt.in.SourceID, tt.details)
		}
	}
	for _, code := range store.ReadOutcomes() {
		if !seen[code] {
			t.Errorf("outcome %q is not exercised here", code)
		}
	}
}

// auditRow reads one audit_events row by id.
func auditRow(t *testing.T, db *store.DB, id int64) store.AuditEvent {
	t.Helper()
	var e store.AuditEvent
	var details []byte
	if err := db.SQL().QueryRowContext(t.Context(), `SELECT id, at, actor, action, COALESCE(project_id::text, ''),
		COALESCE(account_id::text, ''), target, outcome, details FROM audit_events WHERE id = $1`, id).Scan(
		&e.ID, &e.At, &e.Actor, &e.Action, &e.ProjectID, &e.AccountID, &e.Target, &e.Outcome, &details); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(details, &e.Details); err != nil {
		t.Fatal(err)
	}
	return e
}
