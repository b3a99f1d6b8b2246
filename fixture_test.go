package main

// The fixtures of the root tests, in one place. There is one fixture that
// starts the real program for a test to talk to, startServe: serve on a
// listener the test owns, configured from a testEnv exactly as from the
// environment, with the fake GitHub behind serveHooks. (Tests of start-up
// itself call run or serve directly: the refusals in run_test.go, and the
// test that records which variables serve reads.) Everything else builds
// on it:
//
//   - liveServer: startServe plus a tenant made with the real admin CLI, one
//     allowlisted document and synthetic tokens (load, fault, topology tests);
//   - interopFixture (interop_test.go): the same tenant for the real clients,
//     which get their tokens through OAuth themselves;
//   - the helper processes (bench_helper_test.go behind the bench tag, and
//     demo_helper_test.go for scripts/dev) call serve in a process of their own.
//
// adminRun is the admin CLI through run, insertAccessToken and
// insertRefreshToken write OAuth state straight into the database.

import (
	"bytes"
	"context"
	"crypto/sha256"
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
	"sync"
	"testing"
	"time"

	"heyaira/github/githubtest"
	"heyaira/internal/logbuf"
	"heyaira/oauth"

	"github.com/lib/pq"
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

// fakeGitHub points serve at gh: its URL, its HTTP client and its clock.
// The clock matters: gh's is frozen unless a test moves it, and a JWT that
// serve signed by the wall clock would be refused as issued in the future
// once the test has run for longer than the JWT's 60 s backdate (under
// load, PF-09 once read provider_forbidden that way).
func fakeGitHub(gh *githubtest.Server) serveHooks {
	return serveHooks{githubBaseURL: gh.URL(), githubHTTP: gh.HTTPClient(), githubNow: gh.Clock().Now}
}

// followWallClock keeps gh's clock on the wall clock, every second, until
// the returned stop is called, for a server in another process, which signs
// App JWTs by the wall clock and cannot share the fake's: a frozen fake
// would refuse every JWT once the JWT's 60 s backdate has passed since the
// fake started (a slow start on a loaded machine, a long run).
func followWallClock(gh *githubtest.Server) (stop func()) {
	done, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			gh.Clock().Set(time.Now())
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { close(done); <-exited }) }
}

// serveHang bounds startServe's waits for serve to start and to return: only
// a hang reaches it.
const serveHang = 60 * time.Second

// startServe runs serve in the background on a listener the test owns, and
// waits until /healthz answers. It returns the base URL and a stop function
// that cancels and waits for a clean return.
func startServe(t *testing.T, env testEnv, hooks serveHooks, stderr *logbuf.Buffer) (string, func() error) {
	t.Helper()
	ln := hooks.listener
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
		hooks.listener = ln
	}
	base := "http://" + ln.Addr().String()
	if _, ok := env["HEYAIRA_PUBLIC_URL"]; !ok {
		env["HEYAIRA_PUBLIC_URL"] = base
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, env.get, stderr, hooks) }()
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
		case <-time.After(shutdownGrace + serveHang):
			return fmt.Errorf("serve did not return %v after cancel", shutdownGrace+serveHang)
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
func newLiveServer(t *testing.T, dbURL string, gh *githubtest.Server, hooks serveHooks, docSize int) *liveServer {
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

	if hooks.githubBaseURL == "" {
		hooks.githubBaseURL, hooks.githubHTTP, hooks.githubNow = gh.URL(), gh.HTTPClient(), gh.Clock().Now
	}
	s.base, s.stop = startServe(t, env, hooks, s.logs)
	s.access = oauth.NewSecret(oauth.PrefixAccess)
	insertAccessToken(t, dbURL, s.person, s.project, s.base+"/mcp", s.access,
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

// insertAccessToken writes synthetic OAuth state straight into the database: a
// client, a grant for (client, principal, project) and an access token bound
// to resource. Only the token's SHA-256 is stored, as the server does.
func insertAccessToken(t *testing.T, dbURL, principalID, projectID, resource, token string, scopes []string) {
	t.Helper()
	insertToken(t, dbURL, principalID, projectID, resource, "access", token, scopes, time.Hour)
}

// insertRefreshToken is insertAccessToken for a new live refresh token with
// the memory scopes, whose client may refresh.
func insertRefreshToken(t *testing.T, dbURL, principalID, projectID, resource string) (client, token string) {
	t.Helper()
	token = oauth.NewSecret(oauth.PrefixRefresh)
	client = insertToken(t, dbURL, principalID, projectID, resource, "refresh", token,
		[]string{"memory:read", "memory:write"}, 24*time.Hour)
	return client, token
}

// insertToken makes a client that may use both grants, a grant of scopes and
// a token of kind ("access" or "refresh") that lives for ttl.
func insertToken(t *testing.T, dbURL, principalID, projectID, resource, kind, token string, scopes []string, ttl time.Duration) (client string) {
	t.Helper()
	db, err := sql.Open("postgres", dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var grant string
	if err := db.QueryRow(`INSERT INTO oauth_clients (client_name, redirect_uris, metadata)
		VALUES ('test client', ARRAY['http://127.0.0.1/callback'], '{"grant_types":["authorization_code","refresh_token"]}')
		RETURNING id`).Scan(&client); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(`INSERT INTO oauth_grants (client_id, principal_id, project_id, scopes)
		VALUES ($1, $2, $3, $4) RETURNING id`, client, principalID, projectID, pq.Array(scopes)).Scan(&grant); err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256([]byte(token))
	if _, err := db.Exec(`INSERT INTO oauth_tokens (token_hash, kind, grant_id, scopes, resource, family_id, expires_at)
		VALUES ($1, $2, $3, $4, $5, gen_random_uuid(), $6)`,
		h[:], kind, grant, pq.Array(scopes), resource, time.Now().Add(ttl)); err != nil {
		t.Fatal(err)
	}
	return client
}
