package tools_test

import (
	"strings"
	"testing"

	"heyaira/github/githubtest"
	"heyaira/server/catalog"
	"heyaira/server/internal/servertest"

	"github.com/google/go-cmp/cmp"
)

// TestCatalogList: profiles with their layers in assembly order, the
// account's core/mode sources (unread: null hashes) with their GitHub
// location for a caller with documents:read, the project's role
// instructions per profile, missing-layer warnings, and no GitHub request.
func TestCatalogList(t *testing.T) {
	t.Parallel()
	e := servertest.New(t)
	tn := e.NewTenant("acme", "app")
	other := e.NewTenant("beta", "web")
	core := accountSource(e, tn, "core", "acme", "agents", "docs/agents/core.md", "", "main")
	worker := accountSource(e, tn, "mode:worker", "acme", "agents", "docs/agents/worker.md", wfPinned, "")
	general := instructionSource(e, tn, "docs/all.md", "", "main", "")
	eng := instructionSource(e, tn, "docs/engineer.md", wfPinned, "", "engineer")
	rev := instructionSource(e, tn, "docs/reviewer.md", wfPinned, "", "reviewer")
	instructionSource(e, other, "docs/other.md", wfPinned, "", "")
	tok := e.Token(tn, "workflows:read", "documents:read")

	sc := mustCall(e, tok, "catalog_list", nil)
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
	if n := e.GH.Count(githubtest.RouteRef) + e.GH.Count(githubtest.RouteContents); n != 0 {
		t.Errorf("catalog_list made %d GitHub requests", n)
	}

	// Another project of another account sees only its own configuration.
	sc = mustCall(e, e.Token(other, "workflows:read"), "catalog_list", nil)
	if w := sc["warnings"].([]any)[0].(map[string]any); !cmp.Equal(w["layers"], []any{"core", "mode:worker", "mode:verifier"}) {
		t.Errorf("other tenant warnings = %v", w)
	}
}

// Row AZ-14: catalog_list needs only workflows:read, so without
// documents:read it must not say where the instructions come from: no
// GitHub owner, repository or path of an account source or a role
// instruction source, anywhere in the answer. It still shows that each
// source exists, by its opaque source_id. With documents:read the same
// call names them (the control: the strings are there to be hidden).
func TestAZ14CatalogListHidesSourceLocations(t *testing.T) {
	t.Parallel()
	e := servertest.New(t)
	tn := e.NewTenant("secretowner-az14", "secretrepo-az14")
	secrets := []string{"secretowner-az14", "secretrepo-az14", "acctowner-az14", "acctrepo-az14",
		"docs/agents/core-az14.md", "docs/roles/engineer-az14.md"}
	core := accountSource(e, tn, "core", "acctowner-az14", "acctrepo-az14", "docs/agents/core-az14.md", wfPinned, "")
	eng := instructionSource(e, tn, "docs/roles/engineer-az14.md", "", "main", "engineer")

	// ids lists the configured (non-built-in) layers' source ids, and
	// checks that each names its location exactly when located.
	ids := func(t *testing.T, sc map[string]any, located bool) []string {
		t.Helper()
		layers := layersOf(t, map[string]any{"layers": sc["account_layers"]})
		for _, p := range sc["profiles"].([]any) {
			layers = append(layers, layersOf(t, p.(map[string]any))...)
		}
		var got []string
		for _, l := range layers {
			if l["source"] == "builtin" {
				continue
			}
			got = append(got, l["source_id"].(string))
			for _, k := range []string{"github_owner", "github_repository", "path"} {
				if _, has := l[k]; has != located {
					t.Errorf("layer %v: %s present %v, want %v", l["source_id"], k, has, located)
				}
			}
		}
		return got
	}

	sc, isErr, raw := e.Call(e.Token(tn, "workflows:read"), "catalog_list", nil)
	if isErr {
		t.Fatalf("catalog_list with workflows:read: %s", raw)
	}
	for _, s := range secrets {
		if strings.Contains(raw, s) {
			t.Errorf("catalog_list without documents:read names %q: %.400s", s, raw)
		}
	}
	// core, and the role instructions once in the engineer profile.
	if diff := cmp.Diff([]string{core, eng}, ids(t, sc, false)); diff != "" {
		t.Errorf("sources listed without documents:read (-want +got):\n%s", diff)
	}

	sc, isErr, raw = e.Call(e.Token(tn, "workflows:read", "documents:read"), "catalog_list", nil)
	if isErr {
		t.Fatalf("catalog_list with documents:read: %s", raw)
	}
	for _, s := range secrets {
		if !strings.Contains(raw, s) {
			t.Errorf("catalog_list with documents:read does not name %q", s)
		}
	}
	if diff := cmp.Diff([]string{core, eng}, ids(t, sc, true)); diff != "" {
		t.Errorf("sources listed with documents:read (-want +got):\n%s", diff)
	}
}
