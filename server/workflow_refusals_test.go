package server

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"heyaira/github/githubtest"

	"github.com/google/go-cmp/cmp"
)

// This file covers what workflow dispatch refuses or warns about: missing
// account layers, the budget, unreadable sources, configuration changed while
// storing, tenancy, and bad arguments.

func dispatchArgs(task, profile, mode string) map[string]any {
	return map[string]any{"task_id": task, "profile": profile, "mode": mode}
}

// TestWorkflowDispatchLayersMissing: without account core/mode the built-in
// text stays and catalog.layers_missing names what is missing. A project file
// under docs/agents/ never becomes core: it stays a role instruction.
func TestWorkflowDispatchLayersMissing(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	tn := e.newTenant("acme", "app")
	e.gh.AddFile("acme", "app", wfPinned, "docs/agents/core.md", []byte("Project pretending to be core.\n"))
	projectCore := e.instructionSource(tn, "docs/agents/core.md", wfPinned, "", "")
	tok := e.token(tn, workflowScopes...)
	task := e.newTask(tok)

	sc := e.mustCall(tok, "workflow_dispatch", dispatchArgs(task, "engineer", "worker"))
	layers := layersOf(t, sc)
	if layers[0]["source"] != "builtin" || layers[0]["source_id"] != "builtin:core" ||
		layers[1]["source"] != "builtin" || layers[1]["source_id"] != "builtin:mode:worker" {
		t.Errorf("core, mode = %v, %v; want the built-in texts", layers[0], layers[1])
	}
	if layers[4]["name"] != "role_instructions" || layers[4]["source_id"] != projectCore {
		t.Errorf("layer 4 = %v, want the project file as role instructions", layers[4])
	}
	warn := sc["warnings"].([]any)
	if len(warn) != 1 {
		t.Fatalf("warnings = %v", warn)
	}
	w := warn[0].(map[string]any)
	if w["code"] != "catalog.layers_missing" || !cmp.Equal(w["layers"], []any{"core", "mode:worker"}) {
		t.Errorf("warning = %v", w)
	}
	if !strings.Contains(sc["instructions"].(string), "You are an agent working inside one HeyAira project") {
		t.Error("instructions lack the built-in core")
	}

	// With a core source only, a verifier dispatch misses just its mode.
	e.gh.AddFile("acme", "agents", wfPinned, "docs/agents/core.md", []byte("Account core.\n"))
	e.accountSource(tn, "core", "acme", "agents", "docs/agents/core.md", wfPinned, "")
	sc = e.mustCall(tok, "workflow_dispatch", dispatchArgs(task, "researcher", "verifier"))
	w = sc["warnings"].([]any)[0].(map[string]any)
	if !cmp.Equal(w["layers"], []any{"mode:verifier"}) || layersOf(t, sc)[0]["source"] != "account_source" {
		t.Errorf("verifier dispatch: warning %v, core %v", w, layersOf(t, sc)[0])
	}
}

// TestWorkflowDispatchBudgetExceeded: core + mode + role instructions over
// 61,440 bytes fail with every budgeted layer's size, and store nothing.
func TestWorkflowDispatchBudgetExceeded(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	tn := e.newTenant("acme", "app")
	e.gh.AddFile("acme", "agents", wfPinned, "docs/agents/core.md", []byte(strings.Repeat("c", 30000)))
	e.gh.AddFile("acme", "agents", wfPinned, "docs/agents/worker.md", []byte(strings.Repeat("m", 30000)))
	e.gh.AddFile("acme", "app", wfPinned, "docs/big.md", []byte(strings.Repeat("r", 1441)))
	core := e.accountSource(tn, "core", "acme", "agents", "docs/agents/core.md", wfPinned, "")
	mode := e.accountSource(tn, "mode:worker", "acme", "agents", "docs/agents/worker.md", wfPinned, "")
	tok := e.token(tn, workflowScopes...)
	task := e.newTask(tok)

	// Exactly at the limit passes.
	e.mustCall(tok, "workflow_dispatch", dispatchArgs(task, "engineer", "worker"))
	ri := e.instructionSource(tn, "docs/big.md", wfPinned, "", "")
	e.exec(`DELETE FROM audit_events`)
	before := e.countRows("workflows")

	sc := e.wantCode(tok, "workflow_dispatch", dispatchArgs(task, "engineer", "worker"), "catalog_budget_exceeded")
	errObj := sc["error"].(map[string]any)
	if errObj["total_bytes"] != float64(61441) || len(errObj["layers"].([]any)) != 3 {
		t.Errorf("structured error lacks the per-layer sizes: %v", errObj)
	}
	msg := errObj["message"].(string)
	for _, s := range []string{"61441 bytes", "61440-byte budget", "core " + core + " 30000",
		"mode " + mode + " 30000", "role_instructions " + ri + " 1441"} {
		if !strings.Contains(msg, s) {
			t.Errorf("message %q lacks %q", msg, s)
		}
	}
	if n := e.countRows("workflows"); n != before {
		t.Errorf("workflows %d → %d after a refused dispatch", before, n)
	}
	if n := e.countRows(`audit_events WHERE action = 'workflow.dispatch' AND outcome = 'catalog_budget_exceeded'`); n != 1 {
		t.Errorf("%d audit rows for the refusal", n)
	}
}

// TestWorkflowDispatchUnreadableSource: a configured source that cannot be
// read fails the dispatch with that source's code, and nothing is stored.
func TestWorkflowDispatchUnreadableSource(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		setup func(e *testEnv, tn tenant)
		code  string
	}{
		{"pinned file missing", func(e *testEnv, tn tenant) {
			e.accountSource(tn, "core", "acme", "agents", "docs/agents/core.md", wfPinned, "")
		}, "provider_not_found"},
		{"tracking branch missing", func(e *testEnv, tn tenant) {
			e.accountSource(tn, "mode:worker", "acme", "agents", "docs/agents/worker.md", "", "nope")
		}, "provider_not_found"},
		{"instruction file missing at branch head", func(e *testEnv, tn tenant) {
			e.gh.SetBranch("acme", "app", "main", wfCommit1)
			e.instructionSource(tn, "docs/gone.md", "", "main", "engineer")
		}, "provider_not_found"},
		{"GitHub down", func(e *testEnv, tn tenant) {
			e.gh.AddFile("acme", "app", wfPinned, "docs/x.md", []byte("x"))
			e.instructionSource(tn, "docs/x.md", wfPinned, "", "")
			e.gh.Inject(githubtest.RouteContents, githubtest.Status(http.StatusBadGateway, `{"message":"bad"}`))
		}, "provider_unavailable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newTestEnv(t)
			tn := e.newTenant("acme", "app")
			tt.setup(e, tn)
			tok := e.token(tn, workflowScopes...)
			sc := e.wantCode(tok, "workflow_dispatch", dispatchArgs(e.newTask(tok), "engineer", "worker"), tt.code)
			if msg := sc["error"].(map[string]any)["message"].(string); !strings.Contains(msg, "source") {
				t.Errorf("message %q does not name the source", msg)
			}
			if n := e.countRows("workflows"); n != 0 {
				t.Errorf("%d workflows stored", n)
			}
			if n := e.countRows(`audit_events WHERE action = 'workflow.dispatch' AND outcome = '` + tt.code + `'
				AND details ? 'failed_source_id'`); n != 1 {
				t.Errorf("%d audit rows for the failure", n)
			}
		})
	}
}

// TestWorkflowConfigChangedWhileStoring revokes or unlinks a source or
// repository the dispatch used while the dispatch is reading GitHub, after
// it read its configuration: the fake GitHub makes the change before it
// answers.
// Row AZ-07 (docs/security-tests.md).
func TestWorkflowConfigChangedWhileStoring(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		change func(e *testEnv, tn tenant, core, instr string)
	}{
		{"revoke account source", func(e *testEnv, tn tenant, core, _ string) {
			e.exec(`UPDATE account_sources SET revoked_at = now() WHERE id = $1`, core)
		}},
		{"revoke instruction source", func(e *testEnv, tn tenant, _, instr string) {
			e.exec(`UPDATE document_sources SET revoked_at = now() WHERE id = $1`, instr)
		}},
		{"unlink repository", func(e *testEnv, tn tenant, _, _ string) {
			e.exec(`UPDATE repositories SET revoked_at = now() WHERE id = $1`, tn.repo)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newTestEnv(t)
			tn := e.newTenant("acme", "app")
			e.gh.SetBranch("acme", "agents", "main", wfCommit1)
			e.gh.AddFile("acme", "agents", wfCommit1, "docs/agents/core.md", []byte("core"))
			e.gh.AddFile("acme", "app", wfPinned, "docs/i.md", []byte("instr"))
			core := e.accountSource(tn, "core", "acme", "agents", "docs/agents/core.md", "", "main")
			instr := e.instructionSource(tn, "docs/i.md", wfPinned, "", "engineer")
			tok := e.token(tn, workflowScopes...)
			task := e.newTask(tok)
			// A correction of a workflow stored before the change is refused too.
			parent := e.mustCall(tok, "workflow_dispatch", dispatchArgs(task, "engineer", "worker"))["workflow_id"]
			before := e.countRows("workflows")

			var called atomic.Int32
			e.gh.BeforeN(githubtest.RouteContents, 1, func(*http.Request) { called.Add(1); tt.change(e, tn, core, instr) })
			sc, _, _ := e.call(tok, "workflow_dispatch", dispatchArgs(task, "engineer", "worker"))
			errObj, _ := sc["error"].(map[string]any)
			if errObj["code"] != "dispatch_config_changed" || called.Load() != 1 {
				t.Fatalf("dispatch = %v (change made %d times), want dispatch_config_changed", sc, called.Load())
			}
			if n := e.countRows("workflows"); n != before {
				t.Errorf("workflows %d → %d", before, n)
			}
			e.wantCode(tok, "workflow_correct", map[string]any{"workflow_id": parent, "note": "n"}, "dispatch_config_changed")
			if n := e.countRows(`audit_events WHERE outcome = 'dispatch_config_changed'`); n != 2 {
				t.Errorf("%d audit rows for the refusals", n)
			}
		})
	}
}

// TestAccountSourcesGrantNoDocumentAccess: an account source id is not a
// document source, pinned or tracking, in any project of the account.
// Row AZ-07 (docs/security-tests.md).
func TestAccountSourcesGrantNoDocumentAccess(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	tn := e.newTenant("acme", "app")
	e.gh.AddFile("acme", "agents", wfPinned, "docs/agents/core.md", []byte("core"))
	pinned := e.accountSource(tn, "core", "acme", "agents", "docs/agents/core.md", wfPinned, "")
	tracking := e.accountSource(tn, "mode:worker", "acme", "agents", "docs/agents/worker.md", "", "main")
	tok := e.token(tn, "documents:read")
	for _, id := range []string{pinned, tracking} {
		e.wantCode(tok, "git_document_get", map[string]any{"source_id": id}, "source_not_found")
	}
	if n := e.gh.Count(githubtest.RouteContents); n != 0 {
		t.Errorf("%d contents requests", n)
	}

	// A dispatch that resolved tracking sources pins nothing: the project's
	// tracking instruction source stays dispatch-only, and the bootstrap lists
	// project sources only.
	e.gh.SetBranch("acme", "agents", "main", wfCommit1)
	e.gh.SetBranch("acme", "app", "main", wfCommit1)
	e.gh.AddFile("acme", "agents", wfCommit1, "docs/agents/worker.md", []byte("worker"))
	e.gh.AddFile("acme", "app", wfCommit1, "docs/i.md", []byte("instr"))
	instr := e.instructionSource(tn, "docs/i.md", "", "main", "")
	runtime := e.addSource(tn, "runtime", "docs/runtime.md", wfPinned, "", 65536)
	wtok := e.token(tn, workflowScopes...)
	e.mustCall(wtok, "workflow_dispatch", dispatchArgs(e.newTask(wtok), "engineer", "worker"))
	e.wantCode(tok, "git_document_get", map[string]any{"source_id": instr}, "source_requires_dispatch")
	var listed []string
	for _, s := range e.mustCall(tok, "runtime_bootstrap_get", nil)["sources"].([]any) {
		listed = append(listed, s.(map[string]any)["source_id"].(string))
	}
	if !cmp.Equal(listed, []string{instr, runtime}) {
		t.Errorf("bootstrap sources = %v, want %v", listed, []string{instr, runtime})
	}
}

// TestWorkflowTenancy: a dispatch never includes another project's
// instruction sources (of the same account or another), and workflows and
// tasks of another project are not_found.
// Row AZ-07 (docs/security-tests.md).
func TestWorkflowTenancy(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	a := e.newTenant("acme", "app")
	b := e.newTenant("beta", "web")
	e.gh.AddFile("acme", "app", wfPinned, "docs/a.md", []byte("A's rule"))
	e.gh.AddFile("beta", "web", wfPinned, "docs/b.md", []byte("B's rule"))
	e.gh.AddFile("beta", "agents", wfPinned, "docs/agents/core.md", []byte("B's core"))
	aInstr := e.instructionSource(a, "docs/a.md", wfPinned, "", "")
	e.instructionSource(b, "docs/b.md", wfPinned, "", "")
	// A sibling project of A's account, with its own instruction source.
	sibling := a
	sibling.project = e.queryString(`INSERT INTO projects (account_id, name) VALUES ($1, 'sibling') RETURNING id`, a.account)
	sibling.repo = e.queryString(`INSERT INTO repositories (project_id, github_owner, github_repository, github_installation_id)
		VALUES ($1, 'acme', 'app', $2) RETURNING id`, sibling.project, a.installation)
	e.instructionSource(sibling, "docs/sibling.md", wfPinned, "", "")
	e.accountSource(b, "core", "beta", "agents", "docs/agents/core.md", wfPinned, "")
	tokA, tokB := e.token(a, workflowScopes...), e.token(b, workflowScopes...)
	taskA, taskB := e.newTask(tokA), e.newTask(tokB)

	sc := e.mustCall(tokA, "workflow_dispatch", dispatchArgs(taskA, "engineer", "worker"))
	var ids []string
	for _, l := range layersOf(t, sc) {
		if l["source"] != "builtin" {
			ids = append(ids, l["source_id"].(string))
		}
	}
	if !cmp.Equal(ids, []string{aInstr}) || strings.Contains(sc["instructions"].(string), "B's") {
		t.Errorf("A's dispatch used sources %v", ids)
	}
	wfA := sc["workflow_id"].(string)
	e.wantCode(tokB, "workflow_get", map[string]any{"workflow_id": wfA}, "not_found")
	e.wantCode(tokB, "workflow_correct", map[string]any{"workflow_id": wfA, "note": "x"}, "not_found")
	e.wantCode(tokB, "workflow_dispatch", dispatchArgs(taskA, "engineer", "worker"), "not_found")
	e.mustCall(tokB, "workflow_dispatch", dispatchArgs(taskB, "engineer", "worker"))
}

// TestWorkflowArguments covers argument refusals and scopes.
func TestWorkflowArguments(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	tn := e.newTenant("acme", "app")
	tok := e.token(tn, workflowScopes...)
	task := e.newTask(tok)
	wf := e.mustCall(tok, "workflow_dispatch", dispatchArgs(task, "engineer", "worker"))["workflow_id"].(string)
	const unknown = "00000000-0000-4000-8000-000000000000"
	for _, c := range []struct {
		tool string
		args map[string]any
		code string
	}{
		{"workflow_dispatch", dispatchArgs(task, "pirate", "worker"), "profile_not_found"},
		{"workflow_dispatch", dispatchArgs(task, "Engineer", "worker"), "profile_not_found"},
		{"workflow_dispatch", dispatchArgs(task, "engineer", "boss"), "invalid_argument"},
		{"workflow_dispatch", dispatchArgs(unknown, "engineer", "worker"), "not_found"},
		{"workflow_dispatch", dispatchArgs("not-a-uuid", "engineer", "worker"), "not_found"},
		{"workflow_dispatch", map[string]any{"task_id": task, "profile": "engineer"}, "invalid_argument"},
		{"workflow_dispatch", map[string]any{"task_id": task, "profile": "engineer", "mode": "worker", "Mode": "x"}, "invalid_argument"},
		{"workflow_get", map[string]any{"workflow_id": unknown}, "not_found"},
		{"workflow_get", map[string]any{"workflow_id": wf, "view": "tiny"}, "invalid_argument"},
		{"workflow_get", map[string]any{}, "invalid_argument"},
		{"workflow_correct", map[string]any{"workflow_id": wf, "note": ""}, "invalid_argument"},
		{"workflow_correct", map[string]any{"workflow_id": wf, "note": strings.Repeat("n", 16385)}, "invalid_argument"},
		{"workflow_correct", map[string]any{"workflow_id": wf, "note": "a\x00b"}, "invalid_argument"},
		{"workflow_correct", map[string]any{"workflow_id": unknown, "note": "n"}, "not_found"},
		{"catalog_list", map[string]any{"x": 1}, "invalid_argument"},
	} {
		e.wantCode(tok, c.tool, c.args, c.code)
	}
	e.mustCall(tok, "workflow_correct", map[string]any{"workflow_id": wf, "note": strings.Repeat("é", 8192)})
	if n := e.countRows("workflows"); n != 2 {
		t.Errorf("%d workflows after refusals, want 2", n)
	}

	// workflows:read can read but not dispatch or correct; the 403 comes first.
	ro := e.token(tn, "workflows:read")
	e.mustCall(ro, "workflow_get", map[string]any{"workflow_id": wf, "view": "compact"})
	for _, tool := range []string{"workflow_dispatch", "workflow_correct"} {
		r := e.rpc(ro, "tools/call", map[string]any{"name": tool, "arguments": map[string]any{}})
		if r.status != http.StatusForbidden || !strings.Contains(r.header.Get("WWW-Authenticate"), `scope="workflows:write workflows:read"`) {
			t.Errorf("%s with workflows:read: HTTP %d %s", tool, r.status, r.header.Get("WWW-Authenticate"))
		}
	}
	legacy := e.legacyToken(tn)
	for _, tool := range []string{"catalog_list", "workflow_get", "workflow_dispatch", "workflow_correct"} {
		if r := e.rpc(legacy, "tools/call", map[string]any{"name": tool, "arguments": map[string]any{}}); r.status != http.StatusForbidden {
			t.Errorf("legacy token on %s: HTTP %d", tool, r.status)
		}
	}
	if n := e.gh.Count(githubtest.RouteRef) + e.gh.Count(githubtest.RouteContents); n != 0 {
		t.Errorf("%d GitHub requests without any configured source", n)
	}
}
