package tools_test

import (
	"fmt"
	"strings"
	"testing"

	"heyaira/github/githubtest"
	"heyaira/server/internal/servertest"
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
	e := servertest.New(t)
	tn := e.NewTenant("acme", "app")
	secret := "Distinctive instruction text 5678.\n"
	e.GH.AddFile("acme", "app", wfPinned, "docs/all.md", []byte(secret))
	instructionSource(e, tn, "docs/all.md", wfPinned, "", "")
	full := e.Token(tn, workflowScopes...)
	task := newTask(e, full)
	wf := mustCall(e, full, "workflow_dispatch", map[string]any{"task_id": task, "profile": "reviewer", "mode": "verifier"})
	id := wf["workflow_id"].(string)

	meta := e.Cfg.PublicURL + "/.well-known/oauth-protected-resource/mcp"
	challenge := func(scope string) string {
		return `Bearer error="insufficient_scope", scope="` + scope + `", error_description="insufficient scope: ` +
			strings.SplitN(scope, " ", 3)[0] + ` documents:read is required", resource_metadata="` + meta + `"`
	}
	writeOnly := e.Token(tn, "workflows:write", "tasks:write")
	readOnly := e.Token(tn, "workflows:read")
	ghBefore := e.GH.Count(githubtest.RouteContents) + e.GH.Count(githubtest.RouteRef)
	rowsBefore := e.CountRows("workflows") + e.CountRows("audit_events")
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
		r := e.RPC(tt.tok, "tools/call", map[string]any{"name": tt.tool, "arguments": tt.args})
		if r.Status != 403 || r.Header.Get("WWW-Authenticate") != tt.want {
			t.Errorf("%s: HTTP %d %q, want 403 %q", tt.name, r.Status, r.Header.Get("WWW-Authenticate"), tt.want)
		}
		if strings.Contains(string(r.Raw), "Distinctive") {
			t.Errorf("%s: the refusal holds instruction text", tt.name)
		}
	}
	if n := e.GH.Count(githubtest.RouteContents) + e.GH.Count(githubtest.RouteRef) - ghBefore; n != 0 {
		t.Errorf("%d GitHub requests for refused calls", n)
	}
	if n := e.CountRows("workflows") + e.CountRows("audit_events") - rowsBefore; n != 0 {
		t.Errorf("refused calls wrote %d rows", n)
	}

	// Metadata needs only workflows:read, and without documents:read it
	// names no repository or path (as catalog_list: AZ-14).
	_, isErr, raw := e.Call(readOnly, "workflow_get", map[string]any{"workflow_id": id, "view": "compact"})
	if isErr || strings.Contains(raw, "Distinctive") || strings.Contains(raw, "docs/all.md") || strings.Contains(raw, `"app"`) {
		t.Errorf("compact view: %s", raw)
	}
	if _, _, raw := e.Call(full, "workflow_get", map[string]any{"workflow_id": id, "view": "compact"}); !strings.Contains(raw, "docs/all.md") {
		t.Errorf("compact view with documents:read does not name the path: %s", raw)
	}
	if _, isErr, raw := e.Call(readOnly, "catalog_list", nil); isErr || strings.Contains(raw, "Distinctive") {
		t.Errorf("catalog_list: %s", raw)
	}

	// A project with no GitHub source dispatches from built-in text alone.
	plain := e.NewTenant("acme", "other")
	tok := e.Token(plain, "workflows:write", "workflows:read", "tasks:write")
	d := mustCall(e, tok, "workflow_dispatch", map[string]any{"task_id": newTask(e, tok), "profile": "reviewer", "mode": "verifier"})
	wid := d["workflow_id"].(string)
	mustCall(e, tok, "workflow_get", map[string]any{"workflow_id": wid, "view": "full"})
	mustCall(e, tok, "workflow_correct", map[string]any{"workflow_id": wid, "note": "n"})

	// A project whose only GitHub text is its account's docs/agents/ core
	// layer (on a tracked branch) needs documents:read as well.
	acct := e.NewTenant("acct", "agents")
	e.GH.AddFile("acct", "agents", wfPinned, "docs/agents/core.md", []byte("Account core text 9012.\n"))
	e.GH.SetBranch("acct", "agents", "main", wfPinned)
	accountSource(e, acct, "core", "acct", "agents", "docs/agents/core.md", "", "main")
	noDocs := e.Token(acct, "workflows:write", "tasks:write")
	r := e.RPC(noDocs, "tools/call", map[string]any{"name": "workflow_dispatch",
		"arguments": map[string]any{"task_id": newTask(e, noDocs), "profile": "reviewer", "mode": "verifier"}})
	if want := challenge("workflows:write documents:read tasks:write"); r.Status != 403 || r.Header.Get("WWW-Authenticate") != want ||
		strings.Contains(string(r.Raw), "Account core text") {
		t.Errorf("dispatch from an account source without documents:read: HTTP %d %q", r.Status, r.Header.Get("WWW-Authenticate"))
	}
	withDocs := e.Token(acct, workflowScopes...)
	if d := mustCall(e, withDocs, "workflow_dispatch", map[string]any{"task_id": newTask(e, withDocs), "profile": "reviewer",
		"mode": "verifier"}); !strings.Contains(fmt.Sprint(d["instructions"]), "Account core text 9012.") {
		t.Errorf("dispatch with documents:read lacks the account's core text")
	}
}

// TestBT02LegacyTokenIsToldToUseOAuth: a legacy token can never hold
// documents:read, so its 403 says so instead of suggesting a step-up.
func TestBT02LegacyTokenIsToldToUseOAuth(t *testing.T) {
	t.Parallel()
	e := servertest.New(t)
	tn := e.NewTenant("o", "r")
	tok := e.LegacyToken(tn)
	for _, tool := range []string{"git_document_get", "runtime_bootstrap_get", "workflow_dispatch", "catalog_list"} {
		r := e.RPC(tok, "tools/call", map[string]any{"name": tool, "arguments": map[string]any{}})
		h := r.Header.Get("WWW-Authenticate")
		if r.Status != 403 || !strings.Contains(h, `error_description="insufficient scope: legacy tokens can never read documents`) ||
			!strings.Contains(string(r.Raw), "connect this client with OAuth") {
			t.Errorf("%s: HTTP %d %q %s", tool, r.Status, h, r.Raw)
		}
	}
}
