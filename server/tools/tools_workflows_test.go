package tools_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"heyaira/github/githubtest"
	"heyaira/server/internal/servertest"

	"github.com/google/go-cmp/cmp"
)

// Commits of the fake's repositories in the workflow tests.
const (
	wfCommit1 = "c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1"
	wfCommit2 = "c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2"
	wfPinned  = "abababababababababababababababababababab"
)

var workflowScopes = []string{"workflows:read", "workflows:write", "tasks:write", "documents:read"}

// accountSource adds an account instruction source in owner/repo (pinned when
// commit is set, else tracking branch).
func accountSource(e *servertest.Env, tn servertest.Tenant, layer, owner, repo, path, commit, branch string) string {
	e.T.Helper()
	var c, b any
	if commit != "" {
		c = commit
	} else {
		b = branch
	}
	return e.QueryString(`INSERT INTO account_sources (account_id, github_owner, github_repository,
		github_installation_id, layer, path, commit_sha, tracking_ref)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`,
		tn.Account, owner, repo, e.GH.Binding(owner, repo).InstallationID, layer, path, c, b)
}

// instructionSource adds a project instruction source for profile ("" = all).
func instructionSource(e *servertest.Env, tn servertest.Tenant, path, commit, branch, profile string) string {
	e.T.Helper()
	var c, b, p any
	if commit != "" {
		c = commit
	} else {
		b = branch
	}
	if profile != "" {
		p = profile
	}
	return e.QueryString(`INSERT INTO document_sources (project_id, repository_id, role, path, commit_sha, tracking_ref, profile)
		VALUES ($1, $2, 'instruction', $3, $4, $5, $6) RETURNING id`, tn.Project, tn.Repo, path, c, b, p)
}

// newTask creates a task through task_create and returns its id.
func newTask(e *servertest.Env, tok string) string {
	e.T.Helper()
	sc, isErr, raw := e.Call(tok, "task_create", map[string]any{"title": "ship it"})
	if isErr {
		e.T.Fatalf("task_create: %s", raw)
	}
	return sc["task_id"].(string)
}

// mustCall runs a tool that must succeed and returns its structured content.
func mustCall(e *servertest.Env, tok, tool string, args map[string]any) map[string]any {
	e.T.Helper()
	sc, isErr, raw := e.Call(tok, tool, args)
	if isErr {
		e.T.Fatalf("%s(%v): %s", tool, args, raw)
	}
	return sc
}

func layersOf(t *testing.T, sc map[string]any) []map[string]any {
	t.Helper()
	raw, _ := sc["layers"].([]any)
	out := make([]map[string]any, len(raw))
	for i, l := range raw {
		out[i] = l.(map[string]any)
	}
	if len(out) == 0 {
		t.Fatalf("no layers in %v", sc)
	}
	return out
}

func layerNames(layers []map[string]any) []string {
	var out []string
	for _, l := range layers {
		out = append(out, l["name"].(string))
	}
	return out
}

// TestWorkflowDispatchFreezesTrackingCommits is dispatch's main scenario:
// account core and mode:worker tracking main plus a project instruction
// source; then main moves, and only a new dispatch sees it.
// Row AU-02 (docs/security-tests.md).
func TestWorkflowDispatchFreezesTrackingCommits(t *testing.T) {
	t.Parallel()
	e := servertest.New(t)
	tn := e.NewTenant("acme", "app")
	coreV1, coreV2 := "Core rules, v1 — ünïcödé ✓\n", "Core rules, v2.\n"
	workerV1, workerV2 := "Worker mode v1.\n", "Worker mode v2.\n"
	instr := "Project rule: run make check before pushing.\n"
	e.GH.AddFile("acme", "agents", wfCommit1, "docs/agents/core.md", []byte(coreV1))
	e.GH.AddFile("acme", "agents", wfCommit1, "docs/agents/worker.md", []byte(workerV1))
	e.GH.AddFile("acme", "agents", wfCommit2, "docs/agents/core.md", []byte(coreV2))
	e.GH.AddFile("acme", "agents", wfCommit2, "docs/agents/worker.md", []byte(workerV2))
	e.GH.AddFile("acme", "app", wfPinned, "docs/engineer.md", []byte(instr))
	e.GH.SetBranch("acme", "agents", "main", wfCommit1)
	coreID := accountSource(e, tn, "core", "acme", "agents", "docs/agents/core.md", "", "main")
	modeID := accountSource(e, tn, "mode:worker", "acme", "agents", "docs/agents/worker.md", "", "main")
	instrID := instructionSource(e, tn, "docs/engineer.md", wfPinned, "", "engineer")
	tok := e.Token(tn, workflowScopes...)
	task := newTask(e, tok)

	first := mustCall(e, tok, "workflow_dispatch", map[string]any{"task_id": task, "profile": "engineer", "mode": "worker"})
	layers := layersOf(t, first)
	want := []string{"core", "mode", "role_responsibilities", "methodology", "role_instructions", "soul", "skills"}
	if diff := cmp.Diff(want, layerNames(layers)); diff != "" {
		t.Fatalf("layer order (-want +got):\n%s", diff)
	}
	for i, w := range []struct{ id, provenance, commit, text string }{
		{coreID, "tracking:main", wfCommit1, coreV1}, {modeID, "tracking:main", wfCommit1, workerV1},
		4: {instrID, "pinned", wfPinned, instr},
	} {
		if w.id == "" {
			continue
		}
		l := layers[i]
		chars := utf8.RuneCountInString(w.text)
		got := map[string]any{"source_id": l["source_id"], "provenance": l["provenance"], "commit_sha": l["commit_sha"],
			"sha256": l["sha256"], "chars": l["chars"], "bytes": l["bytes"], "est_tokens": l["est_tokens"]}
		exp := map[string]any{"source_id": w.id, "provenance": w.provenance, "commit_sha": w.commit,
			"sha256": servertest.HexSHA([]byte(w.text)), "chars": float64(chars), "bytes": float64(len(w.text)),
			"est_tokens": float64((chars + 3) / 4)}
		if diff := cmp.Diff(exp, got); diff != "" {
			t.Errorf("layer %d %s (-want +got):\n%s", i, l["name"], diff)
		}
	}
	if layers[0]["chars"] == layers[0]["bytes"] {
		t.Error("core text must have multi-byte characters, so chars and bytes differ")
	}
	for _, i := range []int{2, 3, 5, 6} {
		if layers[i]["source"] != "builtin" || layers[i]["provenance"] != "builtin" || layers[i]["commit_sha"] != nil {
			t.Errorf("layer %d = %v, want builtin", i, layers[i])
		}
	}
	if w := first["warnings"].([]any); len(w) != 0 {
		t.Errorf("warnings = %v", w)
	}
	if s := first["instructions"].(string); !strings.Contains(s, coreV1) || !strings.Contains(s, instr) {
		t.Errorf("instructions lack the source texts:\n%s", s)
	}

	// main moves: the frozen workflow, its full view and a correction keep commit 1.
	e.GH.SetBranch("acme", "agents", "main", wfCommit2)
	refs, contents := e.GH.Count(githubtest.RouteRef), e.GH.Count(githubtest.RouteContents)
	id := first["workflow_id"].(string)
	full := mustCall(e, tok, "workflow_get", map[string]any{"workflow_id": id, "view": "full"})
	if diff := cmp.Diff(first, full); diff != "" {
		t.Errorf("workflow_get full differs from the dispatch result (-dispatch +get):\n%s", diff)
	}
	corr := mustCall(e, tok, "workflow_correct", map[string]any{"workflow_id": id, "note": "Use the staging database."})
	if corr["parent_workflow_id"] != id || corr["workflow_id"] == id || corr["correction_note"] != "Use the staging database." {
		t.Errorf("correction = %v", corr)
	}
	if diff := cmp.Diff(layers, layersOf(t, corr)); diff != "" {
		t.Errorf("correction layers differ from the parent's (-parent +child):\n%s", diff)
	}
	if s := corr["instructions"].(string); !strings.Contains(s, coreV1) || strings.Contains(s, coreV2) ||
		!strings.HasSuffix(s, "## Correction\n\nUse the staging database.\n") {
		t.Errorf("correction instructions:\n%s", s)
	}
	if r, c := e.GH.Count(githubtest.RouteRef), e.GH.Count(githubtest.RouteContents); r != refs || c != contents {
		t.Errorf("workflow_get/correct made GitHub requests: refs %d→%d, contents %d→%d", refs, r, contents, c)
	}

	second := mustCall(e, tok, "workflow_dispatch", map[string]any{"task_id": task, "profile": "engineer", "mode": "worker"})
	l2 := layersOf(t, second)
	if l2[0]["commit_sha"] != wfCommit2 || l2[1]["commit_sha"] != wfCommit2 || l2[0]["sha256"] != servertest.HexSHA([]byte(coreV2)) {
		t.Errorf("new dispatch layers = %v, %v; want commit 2", l2[0], l2[1])
	}
	again := mustCall(e, tok, "workflow_get", map[string]any{"workflow_id": id})
	if layersOf(t, again)[0]["commit_sha"] != wfCommit1 {
		t.Error("the first workflow changed after a new dispatch")
	}

	// One audit row per dispatch and correction, with ids and hashes, never text.
	if n := e.CountRows(`audit_events WHERE action IN ('workflow.dispatch', 'workflow.correct') AND outcome = 'ok'`); n != 3 {
		t.Errorf("%d workflow audit rows, want 3", n)
	}
	// Each full view names its reader, the workflow and the sources
	// whose frozen text it showed.
	if n := e.CountRows(`audit_events WHERE action = 'workflow.read' AND outcome = 'ok' AND target = '` + id +
		`' AND details->'sources' @> '[{"source_id":"` + coreID + `","commit_sha":"` + wfCommit1 + `"}]'`); n != 2 {
		t.Errorf("%d workflow.read rows for the two full views, want 2", n)
	}
	if got := e.QueryString(`SELECT DISTINCT actor FROM audit_events WHERE action = 'workflow.read'`); got != "principal:"+tn.Principal {
		t.Errorf("workflow.read actor %q, want the reader", got)
	}
	details := e.QueryString(`SELECT string_agg(details::text, ' ') FROM audit_events WHERE action LIKE 'workflow.%'`)
	for _, s := range []string{"Core rules", "Worker mode", "Project rule", "staging", "As the engineer"} {
		if strings.Contains(details, s) {
			t.Errorf("audit details hold text %q", s)
		}
	}
	for _, s := range []string{coreID, wfCommit1, wfCommit2, servertest.HexSHA([]byte(coreV1)), servertest.HexSHA([]byte(instr))} {
		if !strings.Contains(details, s) {
			t.Errorf("audit details lack %q", s)
		}
	}
}

// TestWorkflowGetCompact: the compact view has exactly the full view's layer
// metadata and no instruction text anywhere in the result.
func TestWorkflowGetCompact(t *testing.T) {
	t.Parallel()
	e := servertest.New(t)
	tn := e.NewTenant("acme", "app")
	secret := "Distinctive instruction text 1234.\n"
	e.GH.AddFile("acme", "app", wfPinned, "docs/all.md", []byte(secret))
	instructionSource(e, tn, "docs/all.md", wfPinned, "", "")
	tok := e.Token(tn, workflowScopes...)
	d := mustCall(e, tok, "workflow_dispatch", map[string]any{"task_id": newTask(e, tok), "profile": "reviewer", "mode": "verifier"})
	id := d["workflow_id"].(string)
	corr := mustCall(e, tok, "workflow_correct", map[string]any{"workflow_id": id, "note": "n"})

	for _, wid := range []string{id, corr["workflow_id"].(string)} {
		full := mustCall(e, tok, "workflow_get", map[string]any{"workflow_id": wid, "view": "full"})
		compact, isErr, raw := e.Call(tok, "workflow_get", map[string]any{"workflow_id": wid, "view": "compact"})
		if isErr {
			t.Fatal(raw)
		}
		if diff := cmp.Diff(full["layers"], compact["layers"]); diff != "" {
			t.Errorf("layer metadata differs (-full +compact):\n%s", diff)
		}
		if compact["view"] != "compact" || full["view"] != "full" {
			t.Errorf("views = %v, %v", full["view"], compact["view"])
		}
		if _, ok := compact["instructions"]; ok {
			t.Error("compact view has instructions")
		}
		for _, s := range []string{"Distinctive instruction", "As the reviewer", "Mode: verifier"} {
			if strings.Contains(raw, s) {
				t.Errorf("compact result holds instruction text %q", s)
			}
			if !strings.Contains(full["instructions"].(string), s) {
				t.Errorf("full view lacks %q", s)
			}
		}
		delete(full, "instructions")
		full["view"] = "compact"
		if diff := cmp.Diff(full, compact); diff != "" {
			t.Errorf("compact is not full minus instructions (-full +compact):\n%s", diff)
		}
	}
}
