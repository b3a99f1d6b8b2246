package lint

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// allowedModules are the only modules besides the standard library. go-cmp is
// for tests and must never be linked into the binary.
var allowedModules = map[string]bool{"github.com/lib/pq": true, "github.com/google/go-cmp": true}

// TestDependencies fails if the binary links any non-standard package outside
// this module and lib/pq, or any of the module's test helpers: the fake
// GitHub (which the demo program links), the database helpers, the load
// generator. "The production binary never reaches the demo's stand-in" is
// then a fact of the import graph.
// Row BT-44 (docs/security-tests.md).
func TestDependencies(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		switch p {
		case "heyaira/github/githubtest", "heyaira/store/storetest", "heyaira/server/internal/servertest", "heyaira/internal/loadgen", "heyaira/internal/demo":
			t.Errorf("the binary links the test helper %s", p)
			continue
		}
		if p == "heyaira" || strings.HasPrefix(p, "heyaira/") || strings.HasPrefix(p, "github.com/lib/pq") {
			continue
		}
		t.Errorf("the binary depends on %q, which is not allowed", p)
	}
}

// TestGoModRequires fails if go.mod requires any module but the two allowed.
func TestGoModRequires(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	inBlock := false
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 0 || strings.HasPrefix(f[0], "//"):
		case f[0] == "require" && len(f) > 1 && f[1] == "(":
			inBlock = true
		case inBlock && f[0] == ")":
			inBlock = false
		case f[0] == "require" && len(f) > 1:
			checkModule(t, f[1])
		case inBlock:
			checkModule(t, f[0])
		}
	}
}

func checkModule(t *testing.T, m string) {
	if !allowedModules[m] {
		t.Errorf("go.mod requires %q, which is not allowed", m)
	}
}

// TestLeafTestsDoNotLinkTheStore fails if the tests of a leaf package link the
// store: they need no database, and the goroutine-leak check they share is
// internal/leaktest, standard library only.
// Row LD-05 (docs/security-tests.md).
func TestLeafTestsDoNotLinkTheStore(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", "-test", "./cursor", "./oauth", "./server/catalog",
		"./github/githubtest", "./internal/leaktest").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if p == "heyaira/store" || strings.HasPrefix(p, "heyaira/store/") {
			t.Errorf("a leaf package's tests link %s", p)
		}
	}
}

// TestImportsFlowOneWay checks docs/design.md §2: leaf packages import no other
// package of this module (store/storetest and github/githubtest are test helpers
// beside what they serve), and only the program (internal/app) imports admin and server.
func TestImportsFlowOneWay(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}:{{join .Imports \",\"}}", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	allowed := map[string][]string{
		"heyaira":               {"heyaira/internal/app"},
		"heyaira/internal/app":  {"heyaira/admin", "heyaira/server", "heyaira/server/metrics", "heyaira/store", "heyaira/github", "heyaira/cursor", "heyaira/internal/secretfile", "heyaira/internal/publicurl", "heyaira/internal/nearest"},
		"heyaira/internal/demo": {"heyaira/internal/app", "heyaira/github/githubtest"},
		"heyaira/admin":         {"heyaira/store", "heyaira/github", "heyaira/oauth", "heyaira/cursor", "heyaira/internal/secretfile", "heyaira/internal/publicurl", "heyaira/internal/nearest"},
		"heyaira/server":        {"heyaira/store", "heyaira/github", "heyaira/cursor", "heyaira/oauth", "heyaira/server/catalog", "heyaira/server/metrics", "heyaira/server/internal/web", "heyaira/server/authserver", "heyaira/server/mcp", "heyaira/server/tools"},
		// The tools reach neither the authorization server nor the MCP
		// endpoint's HTTP side: only its Tool and Principal types.
		"heyaira/server/tools": {"heyaira/store", "heyaira/github", "heyaira/cursor", "heyaira/oauth", "heyaira/server/catalog", "heyaira/server/mcp", "heyaira/server/internal/web"},
		// The MCP endpoint reaches neither the tools (package server) nor the
		// authorization server.
		"heyaira/server/mcp": {"heyaira/store", "heyaira/github", "heyaira/cursor", "heyaira/oauth", "heyaira/server/internal/web", "heyaira/server/metrics"},
		// The authorization server reaches neither the MCP endpoint nor the
		// tools: both live in package server, which it cannot import.
		"heyaira/server/authserver":   {"heyaira/store", "heyaira/oauth", "heyaira/server/internal/web"},
		"heyaira/server/internal/web": {"heyaira/server/metrics"},
		"heyaira/store/storetest":     {"heyaira/store", "heyaira/cursor", "heyaira/oauth", "heyaira/internal/leaktest", "heyaira/internal/skips"},
		// The leak check's time target is gated by the soak switch; both
		// it and the skip report are standard library only.
		"heyaira/internal/leaktest": {"heyaira/internal/skips", "heyaira/internal/soak"},
		"heyaira/github/githubtest": {"heyaira/github"},
		// The whole server for the tests of package server and its
		// subpackages; the binary never links it (TestDependencies).
		"heyaira/server/internal/servertest": {"heyaira/server", "heyaira/server/authserver", "heyaira/server/mcp", "heyaira/store", "heyaira/store/storetest", "heyaira/cursor",
			"heyaira/oauth", "heyaira/github/githubtest", "heyaira/internal/logbuf"},
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, imports, _ := strings.Cut(line, ":")
		for _, imp := range strings.Split(imports, ",") {
			if !strings.HasPrefix(imp, "heyaira/") {
				continue
			}
			ok := false
			for _, a := range allowed[pkg] {
				ok = ok || a == imp
			}
			if !ok {
				t.Errorf("%s imports %s: imports must flow main → app → admin, server → leaf packages", pkg, imp)
			}
		}
	}
}
