package main

import (
	"database/sql"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"heyaira/github/githubtest"
	"heyaira/oauth"
)

// liveServer is the real program (run → serve) on a listener, with a
// tenant made through the admin CLI, one allowlisted document, an access
// token with every memory/task/document scope and a refresh token.
type liveServer struct {
	t        *testing.T
	env      testEnv
	base     string
	stop     func() error
	logs     *syncBuffer
	gh       *githubtest.Server
	dbURL    string
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
	s := &liveServer{t: t, env: env, gh: gh, dbURL: dbURL, logs: &syncBuffer{}}
	adminRun(t, env, "migrate")
	account := str(t, adminRun(t, env, "create-account", "--name", "Load"), "id")
	s.project = str(t, adminRun(t, env, "create-project", "--account-id", account, "--name", "Load"), "id")
	s.person = str(t, adminRun(t, env, "create-principal", "--account-id", account, "--name", "Ada"), "id")
	adminRun(t, env, "add-member", "--project-id", s.project, "--principal-id", s.person)
	// Load and soak runs read far more than the default hourly GitHub budget.
	adminRun(t, env, "set-project-limits", "--project-id", s.project, "--github-requests-per-hour", "1000000")
	inst := strconv.FormatInt(gh.Binding("h8v6", "heyaira").InstallationID, 10)
	adminRun(t, env, "link-repository", "--project-id", s.project, "--github-owner", "h8v6",
		"--github-repository", "heyaira", "--github-installation-id", inst)
	s.source = str(t, adminRun(t, env, "add-document-source", "--project-id", s.project, "--github-owner", "h8v6",
		"--github-repository", "heyaira", "--document-role", "runtime", "--path", "docs/LOAD.md",
		"--commit-sha", liveCommit, "--fragment-limit", "4096"), "source_id")
	s.doc = []byte(strings.Repeat("load test text é € 😀\n", docSize/26+1))[:0]
	for len(s.doc) < docSize {
		s.doc = append(s.doc, "load test text é € 😀\n"...)
	}
	gh.AddFile("h8v6", "heyaira", liveCommit, "docs/LOAD.md", s.doc)

	if hooks.githubBaseURL == "" {
		hooks.githubBaseURL, hooks.githubHTTP = gh.URL(), gh.HTTPClient()
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
