// Package systemtest runs the whole program (app.Run, app.Serve) with its
// real peers: PostgreSQL, the fake GitHub (github/githubtest), real MCP
// clients, Chromium, nginx. Its tests run from the module's root (TestMain,
// leak_test.go), so that they name files and build programs as a user there
// would. The groups, by file name:
//
//   - startup_test.go, dbwait_test.go, githubapp_test.go: start-up refusals,
//     health and shutdown, waiting for PostgreSQL, the App's key;
//   - e2e_test.go, security_main_test.go: the contract end to end, and the
//     attack rows that need the whole program;
//   - interop_*_test.go: real clients (Node packages under scripts/js, the
//     Go SDK under scripts/gosdk, Chromium, curl); they need node and npm;
//   - topology_*_test.go: nginx with TLS in front of replicas, drain,
//     failover (they need nginx; failover needs unshare for its own cluster);
//   - demo_*_test.go: scripts/dev in a clean clone (the program
//     internal/demo), and the production binary without a demo switch (in a
//     network namespace: unshare, ip);
//   - fault_*_test.go, load_test.go, loadgen_test.go: process-level faults of
//     GitHub and PostgreSQL, slow clients, sustained load;
//   - deploy_unit_test.go, operating*_test.go: the shipped unit and runbook.
//
// Plain `go test` skips a test whose prerequisite is missing and reports it;
// scripts/test installs them and sets HEYAIRA_TEST_NO_SKIP=1, which turns
// such a skip into a failure. The benchmark harness is bench/, behind the
// bench build tag.
//
// The fixtures, in one place (this file). There is one fixture that starts
// the real program for a test to talk to, startServe: app.Serve on a listener
// the test owns, configured from a testEnv exactly as from the environment,
// with the fake GitHub behind app.Hooks. (Tests of start-up itself call run or
// app.Serve directly: startup_test.go, and the test that records which
// variables serve reads.) Everything else builds on it:
//
//   - liveServer: startServe plus a tenant made with the real admin CLI, one
//     allowlisted document and synthetic tokens (load, fault, topology tests);
//   - interopFixture (interop_test.go): the same tenant for the real clients,
//     which get their tokens through OAuth themselves;
//   - the load harness's helper process (bench/bench_helper_test.go) and the
//     demo (internal/demo) call app.Serve in a process of their own.
//
// adminRun is the admin CLI through run; storetest.InsertAccessToken and
// insertRefreshToken write OAuth state straight into the database.
package systemtest

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"heyaira/github/githubtest"
	"heyaira/internal/app"
	"heyaira/internal/logbuf"
	"heyaira/oauth"
	"heyaira/store/storetest"
)

// testEnv is a minimal environment for serve: a database, a cursor key and
// a listen address.
type testEnv map[string]string

func (e testEnv) get(k string) string { return e[k] }

func writeFile(t *testing.T, name, content string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	return p
}

func baseEnv(t *testing.T, dbURL string) testEnv {
	return testEnv{
		"HEYAIRA_DATABASE_URL":    dbURL,
		"HEYAIRA_CURSOR_KEY_FILE": writeFile(t, "cursor.key", hexKey(), 0o600),
		"HEYAIRA_LISTEN_ADDR":     "127.0.0.1:0",
		"HEYAIRA_DRAIN_SECONDS":   "0", // tests that drain set their own
	}
}

func hexKey() string { return strings.Repeat("ab", 32) + "\n" }

// secretsOf are the secrets a serve whose cursor key file holds keyFile
// recognises: a test that stores a token itself mints it so.
func secretsOf(t testing.TB, keyFile string) *oauth.Secrets { return storetest.Secrets(t, keyFile) }

// newToken mints a token of the given type for a serve with hexKey(),
// refused after ttl.
func newToken(t testing.TB, prefix string, ttl time.Duration) string {
	return secretsOf(t, hexKey()).Mint(prefix, time.Now().Add(ttl))
}

// fakeGitHub points serve at gh: its URL, its HTTP client and its clock.
// The clock matters: gh's is frozen unless a test moves it, and a JWT that
// serve signed by the wall clock would be refused as issued in the future
// once the test has run for longer than the JWT's 60 s backdate (under
// load, PF-09 once read provider_forbidden that way).
func fakeGitHub(gh *githubtest.Server) app.Hooks {
	return app.Hooks{GitHubBaseURL: gh.URL(), GitHubHTTP: gh.HTTPClient(), GitHubNow: gh.Clock().Now}
}

// serveHang bounds startServe's waits for serve to start and to return: only
// a hang reaches it.
const serveHang = 60 * time.Second

// startServe runs serve in the background on a listener the test owns, and
// waits until /healthz answers. It returns the base URL and a stop function
// that cancels and waits for a clean return.
func startServe(t *testing.T, env testEnv, hooks app.Hooks, stderr *logbuf.Buffer) (string, func() error) {
	t.Helper()
	ln := hooks.Listener
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
		hooks.Listener = ln
	}
	base := "http://" + ln.Addr().String()
	if _, ok := env["HEYAIRA_PUBLIC_URL"]; !ok {
		env["HEYAIRA_PUBLIC_URL"] = base
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- app.Serve(ctx, env.get, stderr, hooks) }()
	// A hang bound, not a target: parallel tests start many servers at once,
	// and on a loaded machine with the race detector one can take seconds.
	deadline := time.Now().Add(serveHang)
	for {
		resp, err := http.Get(base + "/healthz")
		if err == nil {
			resp.Body.Close()
			break
		}
		select {
		case err := <-done:
			t.Fatalf("serve returned early: %v\n%s", err, stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("server not healthy after %v: %v", serveHang, err)
		}
		time.Sleep(20 * time.Millisecond) // back off: never a busy loop
	}
	stopped := false
	stop := func() error {
		if stopped {
			return nil
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(app.ShutdownGrace + serveHang):
			return fmt.Errorf("serve did not return %v after cancel", app.ShutdownGrace+serveHang)
		}
	}
	t.Cleanup(func() { stop() })
	return base, stop
}

// adminRun runs one admin command through run and decodes its --json output.
func adminRun(t *testing.T, env testEnv, args ...string) map[string]any {
	t.Helper()
	var stdout, stderr bytes.Buffer
	argv := append([]string{"heyaira-admin"}, args...)
	argv = append(argv, "--json")
	// Without the App variables: through run, add-document-source would check
	// its path with api.github.com, which the fixtures' fake GitHub is not
	// (the check itself is tested against the fake in package admin).
	getenv := func(k string) string {
		if k == "HEYAIRA_GITHUB_APP_ID" || k == "HEYAIRA_GITHUB_APP_PRIVATE_KEY_FILE" {
			return ""
		}
		return env[k]
	}
	if err := run(t.Context(), argv, getenv, nil, &stdout, &stderr); err != nil {
		t.Fatalf("heyaira-admin %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	var out map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("heyaira-admin %s --json: %v\n%s", args[0], err, stdout.String())
	}
	return out
}

func str(t *testing.T, m map[string]any, key string) string {
	t.Helper()
	s, ok := m[key].(string)
	if !ok {
		t.Fatalf("%q missing in %v", key, m)
	}
	return s
}

// tenant is what adminTenant made with the admin CLI: an account, a project
// "<name> project" in it and a principal called person, a member of it.
type tenant struct{ account, project, person string }

func adminTenant(t *testing.T, env testEnv, name, person string) tenant {
	t.Helper()
	var tn tenant
	tn.account = str(t, adminRun(t, env, "create-account", "--name", name), "id")
	tn.project = str(t, adminRun(t, env, "create-project", "--account-id", tn.account, "--name", name+" project"), "id")
	tn.person = str(t, adminRun(t, env, "create-principal", "--account-id", tn.account, "--name", person), "id")
	adminRun(t, env, "add-member", "--project-id", tn.project, "--principal-id", tn.person)
	return tn
}

// allowlist links h8v6/heyaira to the project with the admin CLI (the
// installation the fake GitHub gives it), allowlists path at commit as the
// runtime document with the fragment limit, puts doc there in the fake, and
// returns the source id.
func allowlist(t *testing.T, env testEnv, gh *githubtest.Server, project, path, commit string, limit int, doc []byte) string {
	t.Helper()
	inst := strconv.FormatInt(gh.Binding("h8v6", "heyaira").InstallationID, 10)
	adminRun(t, env, "link-repository", "--project-id", project, "--github-owner", "h8v6",
		"--github-repository", "heyaira", "--github-installation-id", inst)
	return addDocument(t, env, gh, project, path, commit, limit, doc)
}

// addDocument allowlists one more document of the repository allowlist linked.
func addDocument(t *testing.T, env testEnv, gh *githubtest.Server, project, path, commit string, limit int, doc []byte) string {
	t.Helper()
	source := str(t, adminRun(t, env, "add-document-source", "--project-id", project, "--github-owner", "h8v6",
		"--github-repository", "heyaira", "--document-role", "runtime", "--path", path,
		"--commit-sha", commit, "--fragment-limit", strconv.Itoa(limit)), "source_id")
	gh.AddFile("h8v6", "heyaira", commit, path, doc)
	return source
}

// liveServer is the real program (run → serve) on a listener, with a
// tenant made through the admin CLI, one allowlisted document, an access
// token with every memory/task/document scope and a refresh token.
type liveServer struct {
	t        *testing.T
	env      testEnv
	base     string
	stop     func() error
	logs     *logbuf.Buffer
	gh       *githubtest.Server
	dbURL    string
	account  string
	project  string
	person   string
	source   string
	access   string
	clientID string
	refresh  string
	doc      []byte
}

const liveCommit = "2222222222222222222222222222222222222222"

// newLiveServer migrates dbURL (through the admin CLI), sets up the tenant
// and starts serve with the fake GitHub behind hooks (hooks' githubBaseURL
// and githubHTTP default to gh's).
func newLiveServer(t *testing.T, dbURL string, gh *githubtest.Server, hooks app.Hooks, docSize int) *liveServer {
	t.Helper()
	env := baseEnv(t, dbURL)
	env["HEYAIRA_GITHUB_APP_ID"] = githubtest.AppID
	env["HEYAIRA_GITHUB_APP_PRIVATE_KEY_FILE"] = writeFile(t, "app.pem", string(githubtest.KeyPEM()), 0o600)
	env["HEYAIRA_METRICS_PUBLIC"] = "1" // the load and fault tests read /metrics
	s := &liveServer{t: t, env: env, gh: gh, dbURL: dbURL, logs: &logbuf.Buffer{}}
	adminRun(t, env, "migrate")
	tn := adminTenant(t, env, "Load", "Ada")
	s.account, s.project, s.person = tn.account, tn.project, tn.person
	// Load and soak runs read far more than the default hourly GitHub budget.
	adminRun(t, env, "set-project-limits", "--project-id", s.project, "--github-requests-per-hour", "1000000")
	s.doc = []byte(strings.Repeat("load test text é € 😀\n", docSize/26+1))[:0]
	for len(s.doc) < docSize {
		s.doc = append(s.doc, "load test text é € 😀\n"...)
	}
	s.source = allowlist(t, env, gh, s.project, "docs/LOAD.md", liveCommit, 4096, s.doc)

	if hooks.GitHubBaseURL == "" {
		hooks.GitHubBaseURL, hooks.GitHubHTTP, hooks.GitHubNow = gh.URL(), gh.HTTPClient(), gh.Clock().Now
	}
	s.base, s.stop = startServe(t, env, hooks, s.logs)
	s.access = newToken(t, oauth.PrefixAccess, time.Hour)
	storetest.InsertAccessToken(t, dbURL, s.person, s.project, s.base+"/mcp", s.access,
		[]string{"memory:read", "memory:write", "tasks:read", "tasks:write", "documents:read"})
	s.clientID, s.refresh = insertRefreshToken(t, dbURL, s.person, s.project, s.base+"/mcp")
	return s
}

// refreshForm is the body of a refresh_token grant.
func refreshForm(client, token string) string {
	return url.Values{"grant_type": {"refresh_token"}, "refresh_token": {token}, "client_id": {client}}.Encode()
}

// sqlDB opens dbURL for the test's own queries.
func sqlDB(t testing.TB, dbURL string) *sql.DB {
	t.Helper()
	db, err := sql.Open("postgres", dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// insertRefreshToken is insertAccessToken for a new live refresh token with
// the memory scopes, whose client may refresh.
func insertRefreshToken(t *testing.T, dbURL, principalID, projectID, resource string) (client, token string) {
	t.Helper()
	token = newToken(t, oauth.PrefixRefresh, 24*time.Hour)
	client = storetest.InsertToken(t, dbURL, principalID, projectID, resource, "refresh", token,
		[]string{"memory:read", "memory:write"}, 24*time.Hour)
	return secretsOf(t, hexKey()).ClientID(client), token
}
