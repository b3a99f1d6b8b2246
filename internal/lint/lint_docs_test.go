package lint

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"heyaira/internal/app"
)

// The documentation test: every error code and every HEYAIRA_*
// variable that README.md and docs/*.md name exists in the code, and every
// stable code and every variable the code reads is documented. A stale
// statement ("invalid_cursor" for cursor_invalid) then fails here instead
// of misleading a reader. The admin CLI has no string codes: its exit
// statuses are pinned by TestRunUsage and its reference by
// admin.TestDocsAdminReference.

// testOnlyVars are HEYAIRA_* variables that the docs name but that only the
// tests, their helper processes and scripts read; serve and the admin CLI
// never do (TestAZ11OnlyDocumentedEnvironment). Each is read by a file of
// the tests or of scripts/ (checked below), so the list cannot go stale.
var testOnlyVars = map[string]string{
	"HEYAIRA_F1_E2E_DATABASE_URL":   "the database scripts/test hands the tests (store/storetest)",
	"HEYAIRA_TEST_NO_SKIP":          "scripts/test: a missing prerequisite fails instead of skipping",
	"HEYAIRA_TEST_NGINX":            "scripts/test: the nginx it unpacked under .data/nginx, for the topology tests",
	"HEYAIRA_SOAK":                  "the opt-in soak tests (internal/soak)",
	"HEYAIRA_BENCH":                 "scripts/bench runs the load harness",
	"HEYAIRA_BENCH_HELPER":          "the load harness re-executes the test binary as its server",
	"HEYAIRA_BENCH_PHASES":          "a load harness setting (scripts/bench)",
	"HEYAIRA_BENCH_SIZES":           "a load harness setting (scripts/bench)",
	"HEYAIRA_BENCH_SINGLE_DURATION": "a load harness setting (scripts/bench)",
	"HEYAIRA_BENCH_SINGLE_PROFILE":  "a load harness setting (scripts/bench)",
	"HEYAIRA_BENCH_PGSS":            "a load harness setting (scripts/bench)",
	"HEYAIRA_BENCH_ROUNDS":          "a load harness setting (scripts/bench)",
	"HEYAIRA_BENCH_POOL_WAIT":       "a load harness setting (scripts/bench)",
	"HEYAIRA_BENCH_LATENCY":         "a load harness setting (scripts/bench)",
	"HEYAIRA_BENCH_CPU_PROFILE":     "a load harness setting (scripts/bench)",
}

// exampleVars are names the docs use as examples of what is not a setting.
var exampleVars = map[string]string{
	"HEYAIRA_TRUSTED_PROXY": "the misspelling the README gives as an example of the unknown-variable warning",
}

// Row BT-45 (docs/security-tests.md).
func TestDocsNameOnlyRealVariables(t *testing.T) {
	t.Parallel()
	docs := readDocs(t)
	readme := mustRead(t, "README.md")
	named := regexp.MustCompile(`HEYAIRA_[A-Z0-9_]*[A-Z0-9]`)
	for _, v := range uniq(named.FindAllString(docs, -1)) {
		if !slices.Contains(app.ConfigVars(), v) && !slices.Contains(app.RetiredVars(), v) && testOnlyVars[v] == "" && exampleVars[v] == "" {
			t.Errorf("the docs name %s, which HeyAira does not read (a stale or misspelled name?)", v)
		}
	}
	for _, v := range app.ConfigVars() {
		if !strings.Contains(readme, "| `"+v+"` |") && !strings.Contains(readme, "| `"+v+"`, ") {
			t.Errorf("README's configuration table has no row for %s", v)
		}
	}
	// What the binary reads is app.ConfigVars(): no other HEYAIRA_* name is a
	// string of the packages main is built from.
	for _, m := range regexp.MustCompile(`"(HEYAIRA_[A-Z0-9_]*[A-Z0-9])"`).FindAllStringSubmatch(productionSource(t), -1) {
		if v := m[1]; !slices.Contains(app.ConfigVars(), v) && !slices.Contains(app.RetiredVars(), v) {
			t.Errorf("the binary names %s, which neither app.ConfigVars() nor app.RetiredVars() (envcheck.go) lists", v)
		}
	}
	tests := testAndScriptSource(t)
	for v, why := range testOnlyVars {
		if !strings.Contains(tests, v) {
			t.Errorf("test-only %s (%s) is read by no test or script: drop it", v, why)
		}
	}
}

// codeLike matches the backticked words of the docs that look like error
// codes: the families of the server's, OAuth's and CIMD's codes.
var codeLike = regexp.MustCompile(`^(?:(?:invalid|unsupported|unauthorized|insufficient|temporarily|provider|document|cursor|source|cimd|store|quota|byte|path|repository|runtime|catalog|profile|dispatch|app)_[a-z0-9_]+|[a-z0-9_]+_(?:invalid|expired|not_found|revoked|unavailable|exceeded|forbidden|refused|unconfigured|denied|required|too_large|mismatch|failed|incomplete)|not_found|conflict|rate_limited|access_denied|server_error)$`)

// Row BT-45 (docs/security-tests.md).
func TestDocsNameOnlyRealCodes(t *testing.T) {
	t.Parallel()
	docs := readDocs(t)
	src := productionSource(t)
	literals := map[string]bool{}
	for _, m := range regexp.MustCompile(`"([a-z][a-z0-9]*(?:_[a-z0-9]+)+)"`).FindAllStringSubmatch(src, -1) {
		literals[m[1]] = true
	}
	// JSON field names (repository_ids) and table names (document_sources)
	// are words of the docs too.
	for _, m := range regexp.MustCompile(`json:"([a-z_]+)`).FindAllStringSubmatch(src, -1) {
		literals[m[1]] = true
	}
	for _, m := range regexp.MustCompile(`CREATE TABLE IF NOT EXISTS ([a-z_]+)`).FindAllStringSubmatch(mustRead(t, "schema.sql"), -1) {
		literals[m[1]] = true
	}
	checked := 0
	for _, m := range regexp.MustCompile("`([a-z][a-z0-9_]*)`").FindAllStringSubmatch(docs, -1) {
		if w := m[1]; strings.Contains(w, "_") && codeLike.MatchString(w) {
			checked++
			if !literals[w] {
				t.Errorf("the docs name the code %s, which the code never uses", w)
			}
		}
	}
	if checked < 50 {
		t.Errorf("found only %d code-like words in the docs: is codeLike still right?", checked)
	}

	// The reverse: every stable code is documented somewhere.
	var codes []string
	block := regexp.MustCompile(`(?s)var publicCodes = \[\]string\{(.*?)\n\}`).FindStringSubmatch(mustRead(t, "server/mcp/errors.go"))
	if block == nil {
		t.Fatal("server/mcp/errors.go has no publicCodes list")
	}
	quoted := regexp.MustCompile(`"([a-z_]+)"`)
	for _, m := range quoted.FindAllStringSubmatch(block[1], -1) {
		codes = append(codes, m[1])
	}
	for _, m := range regexp.MustCompile(`ErrCode[A-Za-z]+ += "([a-z_]+)"`).FindAllStringSubmatch(mustRead(t, "oauth/errors.go"), -1) {
		codes = append(codes, m[1]) // the OAuth error codes
	}
	for _, m := range regexp.MustCompile(`"(cimd_[a-z_]+)"`).FindAllStringSubmatch(src, -1) {
		codes = append(codes, m[1])
	}
	for _, m := range regexp.MustCompile(`= "(app_[a-z_]+)"`).FindAllStringSubmatch(mustRead(t, "internal/app/githubapp.go"), -1) {
		codes = append(codes, m[1]) // what /readyz reports about the App
	}
	if len(codes) < 50 {
		t.Fatalf("found only %d stable codes in the code", len(codes))
	}
	for _, c := range uniq(codes) {
		if !strings.Contains(docs, "`"+c+"`") {
			t.Errorf("the code %s is documented nowhere in README.md or docs/*.md", c)
		}
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// readDocs is README.md and every docs/*.md, concatenated.
func readDocs(t *testing.T) string {
	t.Helper()
	files, _ := filepath.Glob("docs/*.md")
	var b strings.Builder
	for _, f := range append([]string{"README.md"}, files...) {
		b.WriteString(mustRead(t, f))
	}
	return b.String()
}

// productionSource is the Go source of the packages of this module that
// the binary is built from, tests excluded.
func productionSource(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", "-f", `{{if not .Standard}}{{.Dir}}{{"\t"}}{{join .GoFiles " "}}{{end}}`, ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		dir, files, _ := strings.Cut(line, "\t")
		if !strings.HasPrefix(dir, mustAbs(t, ".")) {
			continue // lib/pq
		}
		for _, f := range strings.Fields(files) {
			b.WriteString(mustRead(t, filepath.Join(dir, f)))
		}
	}
	return b.String()
}

// testAndScriptSource is every _test.go file of the module, the test
// helper packages and scripts/.
func testAndScriptSource(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() && (d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) && path != "." {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() && (strings.HasSuffix(path, ".go") || strings.HasPrefix(path, "scripts/")) {
			b.WriteString(mustRead(t, path))
		}
		return nil
	})
	return b.String()
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func uniq(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return slices.Compact(s)
}

// TestDocsStaySmall holds the documentation's size budgets: a README read
// in ten minutes, the reader's set (README, design, threat model), the
// sizing page, and docs/ in all. A fact gets one home; a page that grows
// past its budget says something twice or keeps a log.
func TestDocsStaySmall(t *testing.T) {
	t.Parallel()
	size := func(files ...string) int {
		n := 0
		for _, f := range files {
			n += len(mustRead(t, f))
		}
		return n
	}
	all, _ := filepath.Glob("docs/*.md")
	for _, b := range []struct {
		what  string
		files []string
		limit int
	}{
		{"README.md", []string{"README.md"}, 15_000},
		{"the reader's set", []string{"README.md", "docs/design.md", "docs/threat-model.md"}, 60_000},
		{"docs/sizing.md", []string{"docs/sizing.md"}, 6_000},
		{"docs/", all, 200_000},
	} {
		if n := size(b.files...); n > b.limit {
			t.Errorf("%s is %d bytes, over its budget of %d", b.what, n, b.limit)
		}
	}
}
