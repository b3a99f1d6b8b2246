package server

import "testing"

// Rows AZ-05, CU-02, LG-03: a refused document read — another project's
// source, an unknown id, a cursor of another principal — answers
// source_not_found / cursor_invalid exactly as required and writes one
// audit_events row, like every read that names a source.
func TestAZ05RefusedReadsAreAudited(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	tn := e.newTenant("o", "r")
	other := e.newTenant("o", "other")
	e.gh.AddFile("o", "r", commitA, "a.md", mixedText(3000))
	src := e.addSource(tn, "runtime", "a.md", commitA, "", 1000)
	foreign := e.addSource(other, "runtime", "a.md", commitA, "", 1000)
	tok := e.token(tn, "documents:read")
	sc, _, _ := e.call(tok, "git_document_get", map[string]any{"source_id": src})
	cur := sc["next_cursor"].(string)
	bob := e.queryString(`INSERT INTO principals (account_id, name) VALUES ($1, 'bob') RETURNING id`, tn.account)
	e.exec(`INSERT INTO project_members (project_id, principal_id) VALUES ($1, $2)`, tn.project, bob)
	bobTok := e.token(tenant{project: tn.project, principal: bob}, "documents:read")

	for name, call := range map[string]func(){
		"AZ-05(a) another project's source": func() {
			e.wantCode(tok, "git_document_get", map[string]any{"source_id": foreign}, "source_not_found")
		},
		"AZ-05(b) an unknown source": func() {
			e.wantCode(tok, "git_document_get", map[string]any{"source_id": "6f1d1c8e-0000-4000-8000-000000000000"}, "source_not_found")
		},
		"CU-02 another principal's cursor": func() {
			e.wantCode(bobTok, "git_document_get", map[string]any{"source_id": src, "cursor": cur}, "cursor_invalid")
		},
	} {
		before := e.countRows(`audit_events WHERE action = 'document.read'`)
		call()
		if n := e.countRows(`audit_events WHERE action = 'document.read'`) - before; n != 1 {
			t.Errorf("%s: %d audit rows, want 1", name, n)
		}
	}
}
