package tools_test

import (
	"testing"

	"heyaira/server/internal/servertest"
)

// Rows AZ-05, CU-02, LG-03: a refused document read — another project's
// source, an unknown id, a cursor of another principal — answers
// source_not_found / cursor_invalid exactly as required and writes one
// audit_events row, like every read that names a source.
func TestAZ05RefusedReadsAreAudited(t *testing.T) {
	t.Parallel()
	e := servertest.New(t)
	tn := e.NewTenant("o", "r")
	other := e.NewTenant("o", "other")
	e.GH.AddFile("o", "r", servertest.CommitA, "a.md", servertest.MixedText(3000))
	src := e.AddSource(tn, "runtime", "a.md", servertest.CommitA, "", 1000)
	foreign := e.AddSource(other, "runtime", "a.md", servertest.CommitA, "", 1000)
	tok := e.Token(tn, "documents:read")
	sc, _, _ := e.Call(tok, "git_document_get", map[string]any{"source_id": src})
	cur := sc["next_cursor"].(string)
	bob := e.QueryString(`INSERT INTO principals (account_id, name) VALUES ($1, 'bob') RETURNING id`, tn.Account)
	e.Exec(`INSERT INTO project_members (project_id, principal_id) VALUES ($1, $2)`, tn.Project, bob)
	bobTok := e.Token(servertest.Tenant{Project: tn.Project, Principal: bob}, "documents:read")

	for name, call := range map[string]func(){
		"AZ-05(a) another project's source": func() {
			e.WantCode(tok, "git_document_get", map[string]any{"source_id": foreign}, "source_not_found")
		},
		"AZ-05(b) an unknown source": func() {
			e.WantCode(tok, "git_document_get", map[string]any{"source_id": "6f1d1c8e-0000-4000-8000-000000000000"}, "source_not_found")
		},
		"CU-02 another principal's cursor": func() {
			e.WantCode(bobTok, "git_document_get", map[string]any{"source_id": src, "cursor": cur}, "cursor_invalid")
		},
	} {
		before := e.CountRows(`audit_events WHERE action = 'document.read'`)
		call()
		if n := e.CountRows(`audit_events WHERE action = 'document.read'`) - before; n != 1 {
			t.Errorf("%s: %d audit rows, want 1", name, n)
		}
	}
}
