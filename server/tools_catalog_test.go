package server

import (
	"testing"

	"heyaira/github/githubtest"
	"heyaira/server/catalog"

	"github.com/google/go-cmp/cmp"
)

// TestCatalogList: profiles with their layers in assembly order, the
// account's core/mode sources (unread: null hashes), the project's role
// instructions per profile, missing-layer warnings, and no GitHub request.
func TestCatalogList(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	tn := e.newTenant("acme", "app")
	other := e.newTenant("beta", "web")
	core := e.accountSource(tn, "core", "acme", "agents", "docs/agents/core.md", "", "main")
	worker := e.accountSource(tn, "mode:worker", "acme", "agents", "docs/agents/worker.md", wfPinned, "")
	general := e.instructionSource(tn, "docs/all.md", "", "main", "")
	eng := e.instructionSource(tn, "docs/engineer.md", wfPinned, "", "engineer")
	rev := e.instructionSource(tn, "docs/reviewer.md", wfPinned, "", "reviewer")
	e.instructionSource(other, "docs/other.md", wfPinned, "", "")
	tok := e.token(tn, "workflows:read")

	sc := e.mustCall(tok, "catalog_list", nil)
	if sc["catalog_sha256"] != catalog.Digest() || sc["budget_bytes"] != float64(61440) ||
		!cmp.Equal(sc["modes"], []any{"worker", "verifier"}) ||
		!cmp.Equal(sc["layer_order"], []any{"core", "mode", "role_responsibilities", "methodology",
			"role_instructions", "soul", "skills"}) {
		t.Errorf("catalog header = %v", sc)
	}
	account := layersOf(t, map[string]any{"layers": sc["account_layers"]})
	wantCore := map[string]any{"name": "core", "account_layer": "core", "source": "account_source", "source_id": core,
		"provenance": "tracking:main", "commit_sha": nil, "github_owner": "acme", "github_repository": "agents",
		"path": "docs/agents/core.md", "sha256": nil, "bytes": nil, "chars": nil, "est_tokens": nil}
	if diff := cmp.Diff(wantCore, account[0]); diff != "" {
		t.Errorf("core (-want +got):\n%s", diff)
	}
	if account[1]["source_id"] != worker || account[1]["provenance"] != "pinned" || account[1]["commit_sha"] != wfPinned {
		t.Errorf("mode:worker = %v", account[1])
	}
	builtin, _ := catalog.BuiltinAccountLayer("mode:verifier")
	if account[2]["source"] != "builtin" || account[2]["account_layer"] != "mode:verifier" || account[2]["sha256"] != builtin.SHA256 {
		t.Errorf("mode:verifier = %v", account[2])
	}
	warn := sc["warnings"].([]any)
	if len(warn) != 1 || !cmp.Equal(warn[0].(map[string]any)["layers"], []any{"mode:verifier"}) {
		t.Errorf("warnings = %v", warn)
	}

	profiles := sc["profiles"].([]any)
	want := map[string][]string{
		"engineer":   {"builtin", "builtin", general, eng, "builtin", "builtin"},
		"reviewer":   {"builtin", "builtin", general, rev, "builtin", "builtin"},
		"researcher": {"builtin", "builtin", general, "builtin", "builtin"},
	}
	if len(profiles) != len(want) {
		t.Fatalf("%d profiles", len(profiles))
	}
	for _, p := range profiles {
		p := p.(map[string]any)
		var got []string
		for _, l := range layersOf(t, p) {
			if l["source"] == "builtin" {
				got = append(got, "builtin")
				if l["sha256"] == nil || l["est_tokens"] == nil {
					t.Errorf("%s: built-in layer %v lacks its metadata", p["name"], l)
				}
				continue
			}
			got = append(got, l["source_id"].(string))
		}
		if diff := cmp.Diff(want[p["name"].(string)], got); diff != "" || p["title"] == "" || p["description"] == "" {
			t.Errorf("profile %s (-want +got):\n%s", p["name"], diff)
		}
	}
	if n := e.gh.Count(githubtest.RouteRef) + e.gh.Count(githubtest.RouteContents); n != 0 {
		t.Errorf("catalog_list made %d GitHub requests", n)
	}

	// Another project of another account sees only its own configuration.
	sc = e.mustCall(e.token(other, "workflows:read"), "catalog_list", nil)
	if w := sc["warnings"].([]any)[0].(map[string]any); !cmp.Equal(w["layers"], []any{"core", "mode:worker", "mode:verifier"}) {
		t.Errorf("other tenant warnings = %v", w)
	}
}
