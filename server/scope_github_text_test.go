package server

import (
	"fmt"
	"strings"
	"testing"

	"heyaira/github/githubtest"
)

// TestBT01WorkflowTextNeedsDocumentsRead: text read from GitHub reaches a
// caller only with documents:read, whatever tool returns it. Without it,
// workflow_dispatch, workflow_correct and workflow_get view=full answer the
// same 403 insufficient_scope as git_document_get, naming the tool's scope
// and documents:read (plus those granted), before any GitHub request and
// without a stored workflow or audit row. The compact view and catalog_list
// still work, and a profile of built-in text alone still dispatches.
func TestBT01WorkflowTextNeedsDocumentsRead(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	tn := e.newTenant("acme", "app")
	secret := "Distinctive instruction text 5678.\n"
	e.gh.AddFile("acme", "app", wfPinned, "docs/all.md", []byte(secret))
	e.instructionSource(tn, "docs/all.md", wfPinned, "", "")
	full := e.token(tn, workflowScopes...)
	task := e.newTask(full)
	wf := e.mustCall(full, "workflow_dispatch", map[string]any{"task_id": task, "profile": "reviewer", "mode": "verifier"})
	id := wf["workflow_id"].(string)

	meta := e.cfg.PublicURL + "/.well-known/oauth-protected-resource/mcp"
	challenge := func(scope string) string {
		return `Bearer error="insufficient_scope", scope="` + scope + `", error_description="insufficient scope: ` +
			strings.SplitN(scope, " ", 3)[0] + ` documents:read is required", resource_metadata="` + meta + `"`
	}
	writeOnly := e.token(tn, "workflows:write", "tasks:write")
	readOnly := e.token(tn, "workflows:read")
	ghBefore := e.gh.Count(githubtest.RouteContents) + e.gh.Count(githubtest.RouteRef)
	rowsBefore := e.countRows("workflows") + e.countRows("audit_events")
	for _, tt := range []struct {
		name, tok, tool string
		args            map[string]any
		want            string
	}{
		{"dispatch", writeOnly, "workflow_dispatch", map[string]any{"task_id": task, "profile": "reviewer", "mode": "verifier"},
			challenge("workflows:write documents:read tasks:write")},
		{"correct", writeOnly, "workflow_correct", map[string]any{"workflow_id": id, "note": "n"},
			challenge("workflows:write documents:read tasks:write")},
		{"full view", readOnly, "workflow_get", map[string]any{"workflow_id": id, "view": "full"},
			challenge("workflows:read documents:read")},
		{"default view", readOnly, "workflow_get", map[string]any{"workflow_id": id},
			challenge("workflows:read documents:read")},
	} {
		r := e.rpc(tt.tok, "tools/call", map[string]any{"name": tt.tool, "arguments": tt.args})
		if r.status != 403 || r.header.Get("WWW-Authenticate") != tt.want {
			t.Errorf("%s: HTTP %d %q, want 403 %q", tt.name, r.status, r.header.Get("WWW-Authenticate"), tt.want)
		}
		if strings.Contains(string(r.raw), "Distinctive") {
			t.Errorf("%s: the refusal holds instruction text", tt.name)
		}
	}
	if n := e.gh.Count(githubtest.RouteContents) + e.gh.Count(githubtest.RouteRef) - ghBefore; n != 0 {
		t.Errorf("%d GitHub requests for refused calls", n)
	}
	if n := e.countRows("workflows") + e.countRows("audit_events") - rowsBefore; n != 0 {
		t.Errorf("refused calls wrote %d rows", n)
	}

	// Metadata needs only workflows:read, and without documents:read it
	// names no repository or path (review N7, as catalog_list: AZ-14).
	_, isErr, raw := e.call(readOnly, "workflow_get", map[string]any{"workflow_id": id, "view": "compact"})
	if isErr || strings.Contains(raw, "Distinctive") || strings.Contains(raw, "docs/all.md") || strings.Contains(raw, `"app"`) {
		t.Errorf("compact view: %s", raw)
	}
	if _, _, raw := e.call(full, "workflow_get", map[string]any{"workflow_id": id, "view": "compact"}); !strings.Contains(raw, "docs/all.md") {
		t.Errorf("compact view with documents:read does not name the path: %s", raw)
	}
	if _, isErr, raw := e.call(readOnly, "catalog_list", nil); isErr || strings.Contains(raw, "Distinctive") {
		t.Errorf("catalog_list: %s", raw)
	}

	// A project with no GitHub source dispatches from built-in text alone.
	plain := e.newTenant("acme", "other")
	tok := e.token(plain, "workflows:write", "workflows:read", "tasks:write")
	d := e.mustCall(tok, "workflow_dispatch", map[string]any{"task_id": e.newTask(tok), "profile": "reviewer", "mode": "verifier"})
	wid := d["workflow_id"].(string)
	e.mustCall(tok, "workflow_get", map[string]any{"workflow_id": wid, "view": "full"})
	e.mustCall(tok, "workflow_correct", map[string]any{"workflow_id": wid, "note": "n"})

	// A project whose only GitHub text is its account's docs/agents/ core
	// layer (on a tracked branch) needs documents:read as well.
	acct := e.newTenant("acct", "agents")
	e.gh.AddFile("acct", "agents", wfPinned, "docs/agents/core.md", []byte("Account core text 9012.\n"))
	e.gh.SetBranch("acct", "agents", "main", wfPinned)
	e.accountSource(acct, "core", "acct", "agents", "docs/agents/core.md", "", "main")
	noDocs := e.token(acct, "workflows:write", "tasks:write")
	r := e.rpc(noDocs, "tools/call", map[string]any{"name": "workflow_dispatch",
		"arguments": map[string]any{"task_id": e.newTask(noDocs), "profile": "reviewer", "mode": "verifier"}})
	if want := challenge("workflows:write documents:read tasks:write"); r.status != 403 || r.header.Get("WWW-Authenticate") != want ||
		strings.Contains(string(r.raw), "Account core text") {
		t.Errorf("dispatch from an account source without documents:read: HTTP %d %q", r.status, r.header.Get("WWW-Authenticate"))
	}
	withDocs := e.token(acct, workflowScopes...)
	if d := e.mustCall(withDocs, "workflow_dispatch", map[string]any{"task_id": e.newTask(withDocs), "profile": "reviewer",
		"mode": "verifier"}); !strings.Contains(fmt.Sprint(d["instructions"]), "Account core text 9012.") {
		t.Errorf("dispatch with documents:read lacks the account's core text")
	}
}

// TestBT02LegacyTokenIsToldToUseOAuth: a legacy token can never hold
// documents:read, so its 403 says so instead of suggesting a step-up.
func TestBT02LegacyTokenIsToldToUseOAuth(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	tn := e.newTenant("o", "r")
	tok := e.legacyToken(tn)
	for _, tool := range []string{"git_document_get", "runtime_bootstrap_get", "workflow_dispatch", "catalog_list"} {
		r := e.rpc(tok, "tools/call", map[string]any{"name": tool, "arguments": map[string]any{}})
		h := r.header.Get("WWW-Authenticate")
		if r.status != 403 || !strings.Contains(h, `error_description="insufficient scope: legacy tokens can never read documents`) ||
			!strings.Contains(string(r.raw), "connect this client with OAuth") {
			t.Errorf("%s: HTTP %d %q %s", tool, r.status, h, r.raw)
		}
	}
}
