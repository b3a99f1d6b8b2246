package server

// Row AS-03 (docs/security-tests.md §2.19): a document read costs one
// database statement, which authorizes it and writes its audit row before
// GitHub is called; refusals are audited in that same statement and send
// nothing to GitHub; a failure after the authorization writes a second row.

import (
	"encoding/json"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"

	"heyaira/github/githubtest"
	"heyaira/store"
	"heyaira/store/storetest"
)

// newCountedEnv is newTestEnv whose store goes through a wire counter, so a
// test counts the statements each request sends to PostgreSQL.
func newCountedEnv(t *testing.T, mutate ...func(*Config)) (*testEnv, *storetest.WireCounter) {
	t.Helper()
	url := storetest.NewMigratedURL(t)
	wc := storetest.NewWireCounter(t, url)
	db, err := store.Open(t.Context(), wc.DSN(url))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return newTestEnvOn(t, db, nil, mutate...), wc
}

// readRow is one document.read audit row.
type readRow struct {
	id               int64
	actor, target    string
	outcome, project string
	details          map[string]any
}

// readRows are the document.read rows after id, oldest first.
func (e *testEnv) readRows(after int64) []readRow {
	e.t.Helper()
	rows, err := e.db.SQL().Query(`SELECT id, actor, target, outcome, COALESCE(project_id::text, ''), details
		FROM audit_events WHERE action = 'document.read' AND id > $1 ORDER BY id`, after)
	if err != nil {
		e.t.Fatal(err)
	}
	defer rows.Close()
	var out []readRow
	for rows.Next() {
		var r readRow
		var details []byte
		if err := rows.Scan(&r.id, &r.actor, &r.target, &r.outcome, &r.project, &details); err != nil {
			e.t.Fatal(err)
		}
		if err := json.Unmarshal(details, &r.details); err != nil {
			e.t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// lastAuditID is the newest audit row's id (0 when there is none).
func (e *testEnv) lastAuditID() int64 {
	e.t.Helper()
	id, _ := strconv.ParseInt(e.queryString(`SELECT COALESCE(max(id), 0)::text FROM audit_events`), 10, 64)
	return id
}

// TestAS03TwoStatementsPerRead: every fragment of a document, first and
// continuations, costs exactly two statements (the token's lookup, then the
// read's authorization with its row, once the tool limiter allowed the
// call) and one GitHub request, and each has one row (outcome ok) holding
// what was allowed: source, commit, path, start and bound of the range, and
// for a continuation the file's SHA-256 its cursor is bound to. The hashes
// of the fragment are in the answer, not the row.
func TestAS03TwoStatementsPerRead(t *testing.T) {
	t.Parallel()
	e, wc := newCountedEnv(t)
	tn := e.newTenant("o", "r")
	doc := mixedText(2500)
	e.gh.AddFile("o", "r", commitA, "a.md", doc)
	src := e.addSource(tn, "runtime", "a.md", commitA, "", 1000)
	tok := e.token(tn, "documents:read")
	after := e.lastAuditID()
	args := map[string]any{"source_id": src}
	var starts []float64
	var fileSHA string
	for range 10 {
		pg0, gh0 := wc.Counts(), e.gh.Count(githubtest.RouteContents)
		sc, isErr, raw := e.call(tok, "git_document_get", args)
		if isErr {
			t.Fatalf("read: %s", raw)
		}
		if n := wc.Counts().Sub(pg0).Statements; n != 2 {
			t.Errorf("fragment %d: %d database statements, want 2", len(starts), n)
		}
		if n := e.gh.Count(githubtest.RouteContents) - gh0; n != 1 {
			t.Errorf("fragment %d: %d GitHub requests, want 1", len(starts), n)
		}
		starts = append(starts, sc["range"].(map[string]any)["start_byte"].(float64))
		fileSHA = sc["sha256"].(string)
		cur, ok := sc["next_cursor"].(string)
		if !ok {
			break
		}
		args = map[string]any{"source_id": src, "cursor": cur}
	}
	if len(starts) < 3 {
		t.Fatalf("%d fragments, want at least 3", len(starts))
	}
	rows := e.readRows(after)
	if len(rows) != len(starts) {
		t.Fatalf("%d audit rows for %d reads", len(rows), len(starts))
	}
	for i, r := range rows {
		want := map[string]any{"path": "a.md", "commit_sha": commitA, "start_byte": starts[i], "max_bytes": 1000.0}
		if i > 0 {
			want["sha256"] = fileSHA
		}
		if r.outcome != "ok" || r.target != src || r.actor != "principal:"+tn.principal || r.project != tn.project ||
			!jsonEqual(r.details, want) {
			t.Errorf("row %d: %+v, want outcome ok with %v", i, r, want)
		}
	}
}

func jsonEqual(a, b map[string]any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// TestAS03RefusedReadsAreAuditedAndSendNothing: a read refused by the
// database (revoked source, unlinked repository, another project's source,
// a branch-tracking source, a continuation after the source was revoked, a
// cursor of another principal) is answered with its code, writes exactly one
// row with that outcome in its one statement, and sends nothing to GitHub.
// A token without documents:read (403) or whose principal was disabled or
// removed (401) sends nothing either and, as before, writes no row: the
// scope and the token are checked before any read is named in the audit.
func TestAS03RefusedReadsAreAuditedAndSendNothing(t *testing.T) {
	t.Parallel()
	e, wc := newCountedEnv(t)
	tn := e.newTenant("o", "r")
	other := e.newTenant("o", "other")
	e.gh.AddFile("o", "r", commitA, "a.md", mixedText(3000))
	good := e.addSource(tn, "runtime", "a.md", commitA, "", 1000)
	revoked := e.addSource(tn, "runtime", "a.md", commitA, "", 1000)
	e.exec(`UPDATE document_sources SET revoked_at = now() WHERE id = $1`, revoked)
	tracking := e.addSource(tn, "instruction", "a.md", "", "main", 1000)
	foreign := e.addSource(other, "runtime", "a.md", commitA, "", 1000)
	second := tn
	second.repo = e.queryString(`INSERT INTO repositories (project_id, github_owner, github_repository, github_installation_id)
		VALUES ($1, 'o', 'gone', $2) RETURNING id`, tn.project, tn.installation)
	unlinked := e.addSource(second, "runtime", "a.md", commitA, "", 1000)
	e.exec(`UPDATE repositories SET revoked_at = now() WHERE id = $1`, second.repo)
	continued := e.addSource(tn, "runtime", "a.md", commitA, "", 1000)
	tok := e.token(tn, "documents:read")
	sc, _, _ := e.call(tok, "git_document_get", map[string]any{"source_id": continued})
	cur := sc["next_cursor"].(string)
	e.exec(`UPDATE document_sources SET revoked_at = now() WHERE id = $1`, continued)
	bob := e.member(tn, "bob")
	bobTok := e.token(bob, "documents:read")
	noScope := e.token(tn, "memory:read")
	carol := e.member(tn, "carol")
	disabled := e.token(carol, "documents:read")
	e.exec(`UPDATE principals SET disabled_at = now() WHERE id = $1`, carol.principal)
	dave := e.member(tn, "dave")
	removed := e.token(dave, "documents:read")
	e.exec(`DELETE FROM project_members WHERE principal_id = $1`, dave.principal)

	for _, tt := range []struct {
		name, tok string
		args      map[string]any
		code      string // the tool's error code; "" for an HTTP refusal
		status    int
	}{
		{"revoked source", tok, map[string]any{"source_id": revoked}, "source_revoked", 200},
		{"unlinked repository", tok, map[string]any{"source_id": unlinked}, "repository_revoked", 200},
		{"another project's source", tok, map[string]any{"source_id": foreign}, "source_not_found", 200},
		{"tracking source", tok, map[string]any{"source_id": tracking}, "source_requires_dispatch", 200},
		{"continuation after revocation", tok, map[string]any{"source_id": continued, "cursor": cur}, "source_revoked", 200},
		{"another principal's cursor", bobTok, map[string]any{"source_id": continued, "cursor": cur}, "cursor_invalid", 200},
		{"missing scope", noScope, map[string]any{"source_id": good}, "", 403},
		{"disabled principal", disabled, map[string]any{"source_id": good}, "", 401},
		{"removed member", removed, map[string]any{"source_id": good}, "", 401},
	} {
		after := e.lastAuditID()
		pg0, gh0 := wc.Counts(), e.gh.Count(githubtest.RouteContents)+e.gh.Count(githubtest.RouteMint)
		if tt.code != "" {
			e.wantCode(tt.tok, "git_document_get", tt.args, tt.code)
		} else if r := e.rpc(tt.tok, "tools/call", map[string]any{"name": "git_document_get", "arguments": tt.args}); r.status != tt.status {
			t.Errorf("%s: HTTP %d, want %d", tt.name, r.status, tt.status)
		}
		statements := wc.Counts().Sub(pg0).Statements
		if n := e.gh.Count(githubtest.RouteContents) + e.gh.Count(githubtest.RouteMint) - gh0; n != 0 {
			t.Errorf("%s: %d GitHub requests", tt.name, n)
		}
		rows := e.readRows(after)
		switch {
		case tt.code == "" && len(rows) != 0:
			t.Errorf("%s: %d audit rows, want none (as before)", tt.name, len(rows))
		case tt.code == "":
		case len(rows) != 1 || rows[0].outcome != tt.code || rows[0].target != tt.args["source_id"] || rows[0].project != tn.project:
			t.Errorf("%s: rows %+v, want one with outcome %s", tt.name, rows, tt.code)
		case statements != 2:
			t.Errorf("%s: %d statements, want 2 (the token, then the refusal and its row)", tt.name, statements)
		}
	}
}

// TestAS03FailureAfterTheAuthorizationIsRecorded: when GitHub fails after
// the read's row was written, a second row records the failure's code and
// names the authorization's row. A call the caller's tool budget refuses
// (T4-2) is refused before the read's statement: it costs the token's
// lookup alone and writes no row, so a principal's audit rows stay bounded
// by its tool budget.
func TestAS03FailureAfterTheAuthorizationIsRecorded(t *testing.T) {
	t.Parallel()
	e, wc := newCountedEnv(t, func(c *Config) { c.ToolRate, c.ToolBurst = 1e-9, 2 })
	tn := e.newTenant("o", "r")
	e.gh.AddFile("o", "r", commitA, "a.md", []byte("hello"))
	src := e.addSource(tn, "runtime", "a.md", commitA, "", 1000)
	tok := e.token(tn, "documents:read")
	args := map[string]any{"source_id": src}
	after := e.lastAuditID()

	e.gh.InjectN(githubtest.RouteContents, 1, githubtest.Status(500, `{"message":"down"}`))
	pg0 := wc.Counts()
	e.wantCode(tok, "git_document_get", args, "provider_unavailable")
	if n := wc.Counts().Sub(pg0).Statements; n != 3 {
		t.Errorf("a GitHub failure: %d statements, want 3 (the token, the authorization, then the failure)", n)
	}
	if _, isErr, raw := e.call(tok, "git_document_get", args); isErr { // the second of the burst
		t.Fatalf("read: %s", raw)
	}
	gh0 := e.gh.Count(githubtest.RouteContents)
	pg0 = wc.Counts()
	for range 40 {
		e.wantCode(tok, "git_document_get", args, "rate_limited")
	}
	if n := e.gh.Count(githubtest.RouteContents) - gh0; n != 0 {
		t.Errorf("40 rate-limited reads sent %d GitHub requests", n)
	}
	if n := wc.Counts().Sub(pg0).Statements; n != 40 {
		t.Errorf("40 rate-limited reads: %d statements, want 40 (each token's lookup)", n)
	}
	rows := e.readRows(after)
	want := []string{"ok", "provider_unavailable", "ok"}
	if len(rows) != len(want) {
		t.Fatalf("rows %+v, want outcomes %v", rows, want)
	}
	for i, r := range rows {
		if r.outcome != want[i] || r.target != src || r.actor != "principal:"+tn.principal {
			t.Errorf("row %d: %+v, want outcome %s", i, r, want[i])
		}
	}
	for _, i := range []int{1} {
		if id, _ := rows[i].details["authorization_id"].(float64); int64(id) != rows[i-1].id ||
			rows[i].details["path"] != "a.md" || rows[i].details["commit_sha"] != commitA {
			t.Errorf("row %d (%s): details %v, want the authorization row %d, path and commit", i, rows[i].outcome, rows[i].details, rows[i-1].id)
		}
	}
}

// TestAS03AuditRowBeforeGitHub: the read's row is committed (seen from
// another connection) when GitHub receives the request, before any byte of
// the document exists on the server, let alone leaves it.
func TestAS03AuditRowBeforeGitHub(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	tn := e.newTenant("o", "r")
	e.gh.AddFile("o", "r", commitA, "a.md", []byte("hello"))
	src := e.addSource(tn, "runtime", "a.md", commitA, "", 1000)
	tok := e.token(tn, "documents:read")
	var seen atomic.Int64
	seen.Store(-1)
	e.gh.BeforeN(githubtest.RouteContents, 1, func(*http.Request) {
		seen.Store(int64(e.countRows(`audit_events WHERE action = 'document.read' AND outcome = 'ok' AND target = '` + src + `'`)))
	})
	if _, isErr, raw := e.call(tok, "git_document_get", map[string]any{"source_id": src}); isErr {
		t.Fatalf("read: %s", raw)
	}
	if n := seen.Load(); n != 1 {
		t.Errorf("when GitHub was asked, %d committed audit rows for the read, want 1", n)
	}
}
