package tools_test

// Row AS-03 (docs/security-tests.md §2.19): a document read is authorized
// against the database (the token, then the source), reads GitHub, and
// writes its one audit row, with the outcome, before the answer leaves the
// server; refusals are audited too and send nothing to GitHub.

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"heyaira/github/githubtest"
	"heyaira/server"
	"heyaira/server/internal/servertest"
)

// readRow is one document.read audit row.
type readRow struct {
	id               int64
	actor, target    string
	outcome, project string
	details          map[string]any
}

// readRows are the document.read rows after id, oldest first.
func readRows(e *servertest.Env, after int64) []readRow {
	e.T.Helper()
	rows, err := e.DB.SQL().Query(`SELECT id, actor, target, outcome, COALESCE(project_id::text, ''), details
		FROM audit_events WHERE action = 'document.read' AND id > $1 ORDER BY id`, after)
	if err != nil {
		e.T.Fatal(err)
	}
	defer rows.Close()
	var out []readRow
	for rows.Next() {
		var r readRow
		var details []byte
		if err := rows.Scan(&r.id, &r.actor, &r.target, &r.outcome, &r.project, &details); err != nil {
			e.T.Fatal(err)
		}
		if err := json.Unmarshal(details, &r.details); err != nil {
			e.T.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// lastAuditID is the newest audit row's id (0 when there is none).
func lastAuditID(e *servertest.Env) int64 {
	e.T.Helper()
	id, _ := strconv.ParseInt(e.QueryString(`SELECT COALESCE(max(id), 0)::text FROM audit_events`), 10, 64)
	return id
}

// TestAS03ThreeStatementsPerRead: every fragment of a document, first and
// continuations, costs exactly three statements (the token, the source, the
// audit row) and one GitHub request, and each has one row (outcome ok)
// holding what was read: source, commit, path, the range, the file's and the
// fragment's SHA-256, and for a continuation the file SHA-256 its cursor is
// bound to.
func TestAS03ThreeStatementsPerRead(t *testing.T) {
	t.Parallel()
	e, wc := servertest.NewCounted(t)
	tn := e.NewTenant("o", "r")
	doc := servertest.MixedText(2500)
	e.GH.AddFile("o", "r", servertest.CommitA, "a.md", doc)
	src := e.AddSource(tn, "runtime", "a.md", servertest.CommitA, "", 1000)
	tok := e.Token(tn, "documents:read")
	after := lastAuditID(e)
	args := map[string]any{"source_id": src}
	var starts, ends []float64
	var frags []string
	var fileSHA string
	for range 10 {
		pg0, gh0 := wc.Counts(), e.GH.Count(githubtest.RouteContents)
		sc, isErr, raw := e.Call(tok, "git_document_get", args)
		if isErr {
			t.Fatalf("read: %s", raw)
		}
		if n := wc.Counts().Sub(pg0).Statements; n != 3 {
			t.Errorf("fragment %d: %d database statements, want 3", len(starts), n)
		}
		if n := e.GH.Count(githubtest.RouteContents) - gh0; n != 1 {
			t.Errorf("fragment %d: %d GitHub requests, want 1", len(starts), n)
		}
		starts = append(starts, sc["range"].(map[string]any)["start_byte"].(float64))
		ends = append(ends, sc["range"].(map[string]any)["end_byte"].(float64))
		frags = append(frags, sc["fragment_sha256"].(string))
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
	rows := readRows(e, after)
	if len(rows) != len(starts) {
		t.Fatalf("%d audit rows for %d reads", len(rows), len(starts))
	}
	for i, r := range rows {
		want := map[string]any{"path": "a.md", "commit_sha": servertest.CommitA, "start_byte": starts[i], "end_byte": ends[i],
			"sha256": fileSHA, "fragment_sha256": frags[i]}
		if i > 0 {
			want["cursor_sha256"] = fileSHA
		}
		if r.outcome != "ok" || r.target != src || r.actor != "principal:"+tn.Principal || r.project != tn.Project ||
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

// TestAS03RefusedReadsAreAuditedAndSendNothing: a refused read (revoked
// source, unlinked repository, another project's source, a branch-tracking
// source, a continuation after the source was revoked, a cursor of another
// principal) is answered with its code, writes exactly one row with that
// outcome, and sends nothing to GitHub; it costs the token, the source
// (unless the cursor was refused first) and the row. A token without
// documents:read (403) or whose principal was disabled or removed (401)
// sends nothing either and writes no row: the scope and the token are
// checked before any read is named in the audit.
func TestAS03RefusedReadsAreAuditedAndSendNothing(t *testing.T) {
	t.Parallel()
	e, wc := servertest.NewCounted(t)
	tn := e.NewTenant("o", "r")
	other := e.NewTenant("o", "other")
	e.GH.AddFile("o", "r", servertest.CommitA, "a.md", servertest.MixedText(3000))
	good := e.AddSource(tn, "runtime", "a.md", servertest.CommitA, "", 1000)
	revoked := e.AddSource(tn, "runtime", "a.md", servertest.CommitA, "", 1000)
	e.Exec(`UPDATE document_sources SET revoked_at = now() WHERE id = $1`, revoked)
	tracking := e.AddSource(tn, "instruction", "a.md", "", "main", 1000)
	foreign := e.AddSource(other, "runtime", "a.md", servertest.CommitA, "", 1000)
	second := tn
	second.Repo = e.QueryString(`INSERT INTO repositories (project_id, github_owner, github_repository, github_installation_id)
		VALUES ($1, 'o', 'gone', $2) RETURNING id`, tn.Project, tn.Installation)
	unlinked := e.AddSource(second, "runtime", "a.md", servertest.CommitA, "", 1000)
	e.Exec(`UPDATE repositories SET revoked_at = now() WHERE id = $1`, second.Repo)
	continued := e.AddSource(tn, "runtime", "a.md", servertest.CommitA, "", 1000)
	tok := e.Token(tn, "documents:read")
	sc, _, _ := e.Call(tok, "git_document_get", map[string]any{"source_id": continued})
	cur := sc["next_cursor"].(string)
	e.Exec(`UPDATE document_sources SET revoked_at = now() WHERE id = $1`, continued)
	bob := member(e, tn, "bob")
	bobTok := e.Token(bob, "documents:read")
	noScope := e.Token(tn, "memory:read")
	carol := member(e, tn, "carol")
	disabled := e.Token(carol, "documents:read")
	e.Exec(`UPDATE principals SET disabled_at = now() WHERE id = $1`, carol.Principal)
	dave := member(e, tn, "dave")
	removed := e.Token(dave, "documents:read")
	e.Exec(`DELETE FROM project_members WHERE principal_id = $1`, dave.Principal)

	for _, tt := range []struct {
		name, tok string
		args      map[string]any
		code      string // the tool's error code; "" for an HTTP refusal
		status    int    // an HTTP refusal's status; else the statements the read costs
	}{
		{"revoked source", tok, map[string]any{"source_id": revoked}, "source_revoked", 3},
		{"unlinked repository", tok, map[string]any{"source_id": unlinked}, "repository_revoked", 3},
		{"another project's source", tok, map[string]any{"source_id": foreign}, "source_not_found", 3},
		{"tracking source", tok, map[string]any{"source_id": tracking}, "source_requires_dispatch", 3},
		{"continuation after revocation", tok, map[string]any{"source_id": continued, "cursor": cur}, "source_revoked", 3},
		{"another principal's cursor", bobTok, map[string]any{"source_id": continued, "cursor": cur}, "cursor_invalid", 2},
		{"missing scope", noScope, map[string]any{"source_id": good}, "", 403},
		{"disabled principal", disabled, map[string]any{"source_id": good}, "", 401},
		{"removed member", removed, map[string]any{"source_id": good}, "", 401},
	} {
		after := lastAuditID(e)
		pg0, gh0 := wc.Counts(), e.GH.Count(githubtest.RouteContents)+e.GH.Count(githubtest.RouteMint)
		if tt.code != "" {
			e.WantCode(tt.tok, "git_document_get", tt.args, tt.code)
		} else if r := e.RPC(tt.tok, "tools/call", map[string]any{"name": "git_document_get", "arguments": tt.args}); r.Status != tt.status {
			t.Errorf("%s: HTTP %d, want %d", tt.name, r.Status, tt.status)
		}
		statements := wc.Counts().Sub(pg0).Statements
		if n := e.GH.Count(githubtest.RouteContents) + e.GH.Count(githubtest.RouteMint) - gh0; n != 0 {
			t.Errorf("%s: %d GitHub requests", tt.name, n)
		}
		rows := readRows(e, after)
		switch {
		case tt.code == "" && len(rows) != 0:
			t.Errorf("%s: %d audit rows, want none (as before)", tt.name, len(rows))
		case tt.code == "":
		case len(rows) != 1 || rows[0].outcome != tt.code || rows[0].target != tt.args["source_id"] || rows[0].project != tn.Project:
			t.Errorf("%s: rows %+v, want one with outcome %s", tt.name, rows, tt.code)
		case statements != int64(tt.status):
			t.Errorf("%s: %d statements, want %d", tt.name, statements, tt.status)
		}
	}
}

// TestAS03FailureIsTheReadsOneRow: when GitHub fails, the read's one row
// records the failure's code, with the source's path and commit. A call the
// caller's tool budget refuses is refused before the read
// touches the database: it costs the bearer check alone and writes no row,
// so a principal's audit rows are bounded by its tool budget.
// Row AU-01 (docs/security-tests.md).
func TestAS03FailureIsTheReadsOneRow(t *testing.T) {
	t.Parallel()
	e, wc := servertest.NewCounted(t, func(c *server.Config) { c.ToolRate, c.ToolBurst = 1e-9, 2 })
	tn := e.NewTenant("o", "r")
	e.GH.AddFile("o", "r", servertest.CommitA, "a.md", []byte("hello"))
	src := e.AddSource(tn, "runtime", "a.md", servertest.CommitA, "", 1000)
	tok := e.Token(tn, "documents:read")
	args := map[string]any{"source_id": src}
	after := lastAuditID(e)

	e.GH.InjectN(githubtest.RouteContents, 1, githubtest.Status(500, `{"message":"down"}`))
	pg0 := wc.Counts()
	e.WantCode(tok, "git_document_get", args, "provider_unavailable")
	if n := wc.Counts().Sub(pg0).Statements; n != 3 {
		t.Errorf("a GitHub failure: %d statements, want 3 (the token, the source, the row)", n)
	}
	if _, isErr, raw := e.Call(tok, "git_document_get", args); isErr { // the second of the burst
		t.Fatalf("read: %s", raw)
	}
	gh0 := e.GH.Count(githubtest.RouteContents)
	pg0 = wc.Counts()
	for range 40 {
		e.WantCode(tok, "git_document_get", args, "rate_limited")
	}
	if n := e.GH.Count(githubtest.RouteContents) - gh0; n != 0 {
		t.Errorf("40 rate-limited reads sent %d GitHub requests", n)
	}
	if n := wc.Counts().Sub(pg0).Statements; n != 40 {
		t.Errorf("40 rate-limited reads: %d statements, want 40 (each token's lookup)", n)
	}
	rows := readRows(e, after)
	want := []string{"provider_unavailable", "ok"}
	if len(rows) != len(want) {
		t.Fatalf("rows %+v, want outcomes %v", rows, want)
	}
	for i, r := range rows {
		if r.outcome != want[i] || r.target != src || r.actor != "principal:"+tn.Principal ||
			r.details["path"] != "a.md" || r.details["commit_sha"] != servertest.CommitA {
			t.Errorf("row %d: %+v, want outcome %s with path and commit", i, r, want[i])
		}
	}
}

// TestAS03AuditRowBeforeTheAnswer: the read's row is committed before the
// answer leaves the server, so a read whose row cannot be written fails
// closed: the caller gets an error and not a byte of the document.
func TestAS03AuditRowBeforeTheAnswer(t *testing.T) {
	t.Parallel()
	e := servertest.New(t)
	tn := e.NewTenant("o", "r")
	e.GH.AddFile("o", "r", servertest.CommitA, "a.md", []byte("the secret text"))
	src := e.AddSource(tn, "runtime", "a.md", servertest.CommitA, "", 1000)
	tok := e.Token(tn, "documents:read")
	e.Exec(`CREATE FUNCTION refuse_reads() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN RAISE EXCEPTION 'no audit' USING ERRCODE = '53100'; END $$`)
	e.Exec(`CREATE TRIGGER refuse_reads BEFORE INSERT ON audit_events FOR EACH ROW
		WHEN (NEW.action = 'document.read') EXECUTE FUNCTION refuse_reads()`)
	sc, isErr, raw := e.Call(tok, "git_document_get", map[string]any{"source_id": src})
	if !isErr || strings.Contains(raw, "the secret text") {
		t.Fatalf("a read whose row could not be written: %s", raw)
	}
	if code := sc["error"].(map[string]any)["code"]; code != "store_unavailable" && code != "internal" {
		t.Errorf("code %v, want store_unavailable or internal", code)
	}
	if n := e.GH.Count(githubtest.RouteContents); n != 1 {
		t.Errorf("%d GitHub requests, want the read's 1: the row is written after GitHub answered", n)
	}
}
