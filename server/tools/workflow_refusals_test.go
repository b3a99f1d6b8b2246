package tools_test

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"heyaira/github/githubtest"
	"heyaira/server/internal/servertest"

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
	e := servertest.New(t)
	tn := e.NewTenant("acme", "app")
	e.GH.AddFile("acme", "app", wfPinned, "docs/agents/core.md", []byte("Project pretending to be core.\n"))
	projectCore := instructionSource(e, tn, "docs/agents/core.md", wfPinned, "", "")
	tok := e.Token(tn, workflowScopes...)
	task := newTask(e, tok)

	sc := mustCall(e, tok, "workflow_dispatch", dispatchArgs(task, "engineer", "worker"))
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
	e.GH.AddFile("acme", "agents", wfPinned, "docs/agents/core.md", []byte("Account core.\n"))
	accountSource(e, tn, "core", "acme", "agents", "docs/agents/core.md", wfPinned, "")
	sc = mustCall(e, tok, "workflow_dispatch", dispatchArgs(task, "researcher", "verifier"))
	w = sc["warnings"].([]any)[0].(map[string]any)
	if !cmp.Equal(w["layers"], []any{"mode:verifier"}) || layersOf(t, sc)[0]["source"] != "account_source" {
		t.Errorf("verifier dispatch: warning %v, core %v", w, layersOf(t, sc)[0])
	}
}

// TestWorkflowDispatchBudgetExceeded: core + mode + role instructions over
// 61,440 bytes fail with every budgeted layer's size, and store nothing.
func TestWorkflowDispatchBudgetExceeded(t *testing.T) {
	t.Parallel()
	e := servertest.New(t)
	tn := e.NewTenant("acme", "app")
	e.GH.AddFile("acme", "agents", wfPinned, "docs/agents/core.md", []byte(strings.Repeat("c", 30000)))
	e.GH.AddFile("acme", "agents", wfPinned, "docs/agents/worker.md", []byte(strings.Repeat("m", 30000)))
	e.GH.AddFile("acme", "app", wfPinned, "docs/big.md", []byte(strings.Repeat("r", 1441)))
	core := accountSource(e, tn, "core", "acme", "agents", "docs/agents/core.md", wfPinned, "")
	mode := accountSource(e, tn, "mode:worker", "acme", "agents", "docs/agents/worker.md", wfPinned, "")
	tok := e.Token(tn, workflowScopes...)
	task := newTask(e, tok)

	// Exactly at the limit passes.
	mustCall(e, tok, "workflow_dispatch", dispatchArgs(task, "engineer", "worker"))
	ri := instructionSource(e, tn, "docs/big.md", wfPinned, "", "")
	e.Exec(`DELETE FROM audit_events`)
	before := e.CountRows("workflows")

	sc := e.WantCode(tok, "workflow_dispatch", dispatchArgs(task, "engineer", "worker"), "catalog_budget_exceeded")
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
	if n := e.CountRows("workflows"); n != before {
		t.Errorf("workflows %d → %d after a refused dispatch", before, n)
	}
	if n := e.CountRows(`audit_events WHERE action = 'workflow.dispatch' AND outcome = 'catalog_budget_exceeded'`); n != 1 {
		t.Errorf("%d audit rows for the refusal", n)
	}
}

// TestWorkflowDispatchUnreadableSource: a configured source that cannot be
// read fails the dispatch with that source's code, and nothing is stored.
func TestWorkflowDispatchUnreadableSource(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		setup func(e *servertest.Env, tn servertest.Tenant)
		code  string
	}{
		{"pinned file missing", func(e *servertest.Env, tn servertest.Tenant) {
			accountSource(e, tn, "core", "acme", "agents", "docs/agents/core.md", wfPinned, "")
		}, "provider_not_found"},
		{"tracking branch missing", func(e *servertest.Env, tn servertest.Tenant) {
			accountSource(e, tn, "mode:worker", "acme", "agents", "docs/agents/worker.md", "", "nope")
		}, "provider_not_found"},
		{"instruction file missing at branch head", func(e *servertest.Env, tn servertest.Tenant) {
			e.GH.SetBranch("acme", "app", "main", wfCommit1)
			instructionSource(e, tn, "docs/gone.md", "", "main", "engineer")
		}, "provider_not_found"},
		{"GitHub down", func(e *servertest.Env, tn servertest.Tenant) {
			e.GH.AddFile("acme", "app", wfPinned, "docs/x.md", []byte("x"))
			instructionSource(e, tn, "docs/x.md", wfPinned, "", "")
			e.GH.Inject(githubtest.RouteContents, githubtest.Status(http.StatusBadGateway, `{"message":"bad"}`))
		}, "provider_unavailable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := servertest.New(t)
			tn := e.NewTenant("acme", "app")
			tt.setup(e, tn)
			tok := e.Token(tn, workflowScopes...)
			sc := e.WantCode(tok, "workflow_dispatch", dispatchArgs(newTask(e, tok), "engineer", "worker"), tt.code)
			if msg := sc["error"].(map[string]any)["message"].(string); !strings.Contains(msg, "source") {
				t.Errorf("message %q does not name the source", msg)
			}
			if n := e.CountRows("workflows"); n != 0 {
				t.Errorf("%d workflows stored", n)
			}
			if n := e.CountRows(`audit_events WHERE action = 'workflow.dispatch' AND outcome = '` + tt.code + `'
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
		change func(e *servertest.Env, tn servertest.Tenant, core, instr string)
	}{
		{"revoke account source", func(e *servertest.Env, tn servertest.Tenant, core, _ string) {
			e.Exec(`UPDATE account_sources SET revoked_at = now() WHERE id = $1`, core)
		}},
		{"revoke instruction source", func(e *servertest.Env, tn servertest.Tenant, _, instr string) {
			e.Exec(`UPDATE document_sources SET revoked_at = now() WHERE id = $1`, instr)
		}},
		{"unlink repository", func(e *servertest.Env, tn servertest.Tenant, _, _ string) {
			e.Exec(`UPDATE repositories SET revoked_at = now() WHERE id = $1`, tn.Repo)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := servertest.New(t)
			tn := e.NewTenant("acme", "app")
			e.GH.SetBranch("acme", "agents", "main", wfCommit1)
			e.GH.AddFile("acme", "agents", wfCommit1, "docs/agents/core.md", []byte("core"))
			e.GH.AddFile("acme", "app", wfPinned, "docs/i.md", []byte("instr"))
			core := accountSource(e, tn, "core", "acme", "agents", "docs/agents/core.md", "", "main")
			instr := instructionSource(e, tn, "docs/i.md", wfPinned, "", "engineer")
			tok := e.Token(tn, workflowScopes...)
			task := newTask(e, tok)
			// A correction of a workflow stored before the change is refused too.
			parent := mustCall(e, tok, "workflow_dispatch", dispatchArgs(task, "engineer", "worker"))["workflow_id"]
			before := e.CountRows("workflows")

			var called atomic.Int32
			e.GH.BeforeN(githubtest.RouteContents, 1, func(*http.Request) { called.Add(1); tt.change(e, tn, core, instr) })
			sc, _, _ := e.Call(tok, "workflow_dispatch", dispatchArgs(task, "engineer", "worker"))
			errObj, _ := sc["error"].(map[string]any)
			if errObj["code"] != "dispatch_config_changed" || called.Load() != 1 {
				t.Fatalf("dispatch = %v (change made %d times), want dispatch_config_changed", sc, called.Load())
			}
			if n := e.CountRows("workflows"); n != before {
				t.Errorf("workflows %d → %d", before, n)
			}
			e.WantCode(tok, "workflow_correct", map[string]any{"workflow_id": parent, "note": "n"}, "dispatch_config_changed")
			if n := e.CountRows(`audit_events WHERE outcome = 'dispatch_config_changed'`); n != 2 {
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
	e := servertest.New(t)
	tn := e.NewTenant("acme", "app")
	e.GH.AddFile("acme", "agents", wfPinned, "docs/agents/core.md", []byte("core"))
	pinned := accountSource(e, tn, "core", "acme", "agents", "docs/agents/core.md", wfPinned, "")
	tracking := accountSource(e, tn, "mode:worker", "acme", "agents", "docs/agents/worker.md", "", "main")
	tok := e.Token(tn, "documents:read")
	for _, id := range []string{pinned, tracking} {
		e.WantCode(tok, "git_document_get", map[string]any{"source_id": id}, "source_not_found")
	}
	if n := e.GH.Count(githubtest.RouteContents); n != 0 {
		t.Errorf("%d contents requests", n)
	}

	// A dispatch that resolved tracking sources pins nothing: the project's
	// tracking instruction source stays dispatch-only, and the bootstrap lists
	// project sources only.
	e.GH.SetBranch("acme", "agents", "main", wfCommit1)
	e.GH.SetBranch("acme", "app", "main", wfCommit1)
	e.GH.AddFile("acme", "agents", wfCommit1, "docs/agents/worker.md", []byte("worker"))
	e.GH.AddFile("acme", "app", wfCommit1, "docs/i.md", []byte("instr"))
	instr := instructionSource(e, tn, "docs/i.md", "", "main", "")
	runtime := e.AddSource(tn, "runtime", "docs/runtime.md", wfPinned, "", 65536)
	wtok := e.Token(tn, workflowScopes...)
	mustCall(e, wtok, "workflow_dispatch", dispatchArgs(newTask(e, wtok), "engineer", "worker"))
	e.WantCode(tok, "git_document_get", map[string]any{"source_id": instr}, "source_requires_dispatch")
	var listed []string
	for _, s := range mustCall(e, tok, "runtime_bootstrap_get", nil)["sources"].([]any) {
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
	e := servertest.New(t)
	a := e.NewTenant("acme", "app")
	b := e.NewTenant("beta", "web")
	e.GH.AddFile("acme", "app", wfPinned, "docs/a.md", []byte("A's rule"))
	e.GH.AddFile("beta", "web", wfPinned, "docs/b.md", []byte("B's rule"))
	e.GH.AddFile("beta", "agents", wfPinned, "docs/agents/core.md", []byte("B's core"))
	aInstr := instructionSource(e, a, "docs/a.md", wfPinned, "", "")
	instructionSource(e, b, "docs/b.md", wfPinned, "", "")
	// A sibling project of A's account, with its own instruction source.
	sibling := a
	sibling.Project = e.QueryString(`INSERT INTO projects (account_id, name) VALUES ($1, 'sibling') RETURNING id`, a.Account)
	sibling.Repo = e.QueryString(`INSERT INTO repositories (project_id, github_owner, github_repository, github_installation_id)
		VALUES ($1, 'acme', 'app', $2) RETURNING id`, sibling.Project, a.Installation)
	instructionSource(e, sibling, "docs/sibling.md", wfPinned, "", "")
	accountSource(e, b, "core", "beta", "agents", "docs/agents/core.md", wfPinned, "")
	tokA, tokB := e.Token(a, workflowScopes...), e.Token(b, workflowScopes...)
	taskA, taskB := newTask(e, tokA), newTask(e, tokB)

	sc := mustCall(e, tokA, "workflow_dispatch", dispatchArgs(taskA, "engineer", "worker"))
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
	e.WantCode(tokB, "workflow_get", map[string]any{"workflow_id": wfA}, "not_found")
	e.WantCode(tokB, "workflow_correct", map[string]any{"workflow_id": wfA, "note": "x"}, "not_found")
	e.WantCode(tokB, "workflow_dispatch", dispatchArgs(taskA, "engineer", "worker"), "not_found")
	mustCall(e, tokB, "workflow_dispatch", dispatchArgs(taskB, "engineer", "worker"))
}

// TestWorkflowArguments covers argument refusals and scopes.
func TestWorkflowArguments(t *testing.T) {
	t.Parallel()
	e := servertest.New(t)
	tn := e.NewTenant("acme", "app")
	tok := e.Token(tn, workflowScopes...)
	task := newTask(e, tok)
	wf := mustCall(e, tok, "workflow_dispatch", dispatchArgs(task, "engineer", "worker"))["workflow_id"].(string)
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
		e.WantCode(tok, c.tool, c.args, c.code)
	}
	mustCall(e, tok, "workflow_correct", map[string]any{"workflow_id": wf, "note": strings.Repeat("é", 8192)})
	if n := e.CountRows("workflows"); n != 2 {
		t.Errorf("%d workflows after refusals, want 2", n)
	}

	// workflows:read can read but not dispatch or correct; the 403 comes first.
	ro := e.Token(tn, "workflows:read")
	mustCall(e, ro, "workflow_get", map[string]any{"workflow_id": wf, "view": "compact"})
	for _, tool := range []string{"workflow_dispatch", "workflow_correct"} {
		r := e.RPC(ro, "tools/call", map[string]any{"name": tool, "arguments": map[string]any{}})
		if r.Status != http.StatusForbidden || !strings.Contains(r.Header.Get("WWW-Authenticate"), `scope="workflows:write workflows:read"`) {
			t.Errorf("%s with workflows:read: HTTP %d %s", tool, r.Status, r.Header.Get("WWW-Authenticate"))
		}
	}
	legacy := e.LegacyToken(tn)
	for _, tool := range []string{"catalog_list", "workflow_get", "workflow_dispatch", "workflow_correct"} {
		if r := e.RPC(legacy, "tools/call", map[string]any{"name": tool, "arguments": map[string]any{}}); r.Status != http.StatusForbidden {
			t.Errorf("legacy token on %s: HTTP %d", tool, r.Status)
		}
	}
	if n := e.GH.Count(githubtest.RouteRef) + e.GH.Count(githubtest.RouteContents); n != 0 {
		t.Errorf("%d GitHub requests without any configured source", n)
	}
}
