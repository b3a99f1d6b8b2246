package server

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"heyaira/cursor"
	"heyaira/github/githubtest"
	"heyaira/internal/logbuf"
	"heyaira/oauth"
	"heyaira/store"
	"heyaira/store/storetest"

	"github.com/lib/pq"
)

// testEnv is a real server (NewServer) on httptest, a fresh migrated
// database, the fake GitHub and a capturing logger.
type testEnv struct {
	t       testing.TB
	db      *store.DB
	gh      *githubtest.Server
	srv     *httptest.Server
	cursors *cursor.Codec
	logs    *logbuf.Buffer
	cfg     Config
	// clock is cfg.Now unless a mutator replaced it: it stands still
	// until the test advances it.
	clock *testClock
	// canaries are the tokens, cursors and content this test handled; no
	// spelling of any may reach the log (LG-01, checked at cleanup).
	canaries *canarySet
	secrets  *oauth.Secrets // the server's: what it mints, tests mint too
}

func newTestEnv(t testing.TB, mutate ...func(*Config)) *testEnv {
	t.Helper()
	return newTestEnvOn(t, storetest.New(t), nil, mutate...)
}

// newTestEnvGitHub is newTestEnv with options for the server's GitHub
// client (by default the fake's: 10 s timeout, the fake's clock).
func newTestEnvGitHub(t testing.TB, ghOpts []githubtest.Option, mutate ...func(*Config)) *testEnv {
	t.Helper()
	return newTestEnvOn(t, storetest.New(t), ghOpts, mutate...)
}

// newTestEnvOn is newTestEnv on the store db (one whose traffic a test
// counts, say), with options for the server's GitHub client.
func newTestEnvOn(t testing.TB, db *store.DB, ghOpts []githubtest.Option, mutate ...func(*Config)) *testEnv {
	t.Helper()
	e := &testEnv{t: t, db: db, gh: githubtest.New(t), logs: &logbuf.Buffer{}, canaries: &canarySet{}}
	var err error
	if e.cursors, err = cursor.NewCodec(bytes.Repeat([]byte{7}, 32)); err != nil {
		t.Fatal(err)
	}
	e.secrets = oauth.NewSecrets(e.cursors.Derive(oauth.KeyLabel))
	e.srv = httptest.NewUnstartedServer(nil)
	e.clock = newTestClock()
	e.cfg = Config{PublicURL: "http://" + e.srv.Listener.Addr().String(), Version: "test", Now: e.clock.now}
	for _, m := range mutate {
		m(&e.cfg)
	}
	logger := slog.New(slog.NewJSONHandler(e.logs, nil))
	e.srv.Config.Handler = NewServer(logger, e.cfg, e.db, e.gh.Client(ghOpts...), e.cursors)
	e.srv.Start()
	t.Cleanup(e.srv.Close)
	// Runs before srv.Close (cleanups are last in, first out), when every
	// request of the test has been answered and logged.
	t.Cleanup(func() {
		for _, leak := range e.canaries.find(e.logs.String()) {
			t.Errorf("LG-01: the log holds %s", leak)
		}
	})
	return e
}

// tenant is one project with a member principal and a linked repository.
type tenant struct {
	account, project, principal, repo string
	owner, repoName                   string
	installation                      int64
}

func (e *testEnv) exec(q string, args ...any) {
	e.t.Helper()
	if _, err := e.db.SQL().Exec(q, args...); err != nil {
		e.t.Fatalf("%s: %v", q, err)
	}
}

func (e *testEnv) queryString(q string, args ...any) string {
	e.t.Helper()
	var s string
	if err := e.db.SQL().QueryRow(q, args...).Scan(&s); err != nil {
		e.t.Fatalf("%s: %v", q, err)
	}
	return s
}

// newTenant creates account, project, principal (a member) and links owner/repo.
func (e *testEnv) newTenant(owner, repo string) tenant {
	e.t.Helper()
	tn := tenant{owner: owner, repoName: repo, installation: e.gh.Binding(owner, repo).InstallationID}
	tn.account = e.queryString(`INSERT INTO accounts (name) VALUES ('acct') RETURNING id`)
	tn.project = e.queryString(`INSERT INTO projects (account_id, name) VALUES ($1, 'proj') RETURNING id`, tn.account)
	tn.principal = e.queryString(`INSERT INTO principals (account_id, name) VALUES ($1, 'ada') RETURNING id`, tn.account)
	e.exec(`INSERT INTO project_members (project_id, principal_id) VALUES ($1, $2)`, tn.project, tn.principal)
	tn.repo = e.queryString(`INSERT INTO repositories (project_id, github_owner, github_repository, github_installation_id)
		VALUES ($1, $2, $3, $4) RETURNING id`, tn.project, owner, repo, tn.installation)
	return tn
}

// addSource allowlists path at commit (or tracking branch if commit is "").
func (e *testEnv) addSource(tn tenant, role, path, commit, tracking string, limit int) string {
	e.t.Helper()
	var c, tr any
	if commit != "" {
		c = commit
	}
	if tracking != "" {
		tr = tracking
	}
	return e.queryString(`INSERT INTO document_sources (project_id, repository_id, role, path, commit_sha, tracking_ref, fragment_limit)
		VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`, tn.project, tn.repo, role, path, c, tr, limit)
}

// token issues an OAuth access token for the tenant's principal with scopes.
func (e *testEnv) token(tn tenant, scopes ...string) string {
	e.t.Helper()
	client := e.queryString(`INSERT INTO oauth_clients (client_name, redirect_uris)
		VALUES ('test', ARRAY['http://127.0.0.1/cb']) RETURNING id`)
	grant := e.queryString(`INSERT INTO oauth_grants (client_id, principal_id, project_id, scopes)
		VALUES ($1, $2, $3, $4) RETURNING id`, client, tn.principal, tn.project, pq.Array(scopes))
	tok := e.secrets.Mint(oauth.PrefixAccess, time.Now().Add(time.Hour))
	h := sha256.Sum256([]byte(tok))
	e.exec(`INSERT INTO oauth_tokens (token_hash, kind, grant_id, scopes, resource, family_id, expires_at)
		VALUES ($1, 'access', $2, $3, $4, gen_random_uuid(), $5)`,
		h[:], grant, pq.Array(scopes), e.cfg.PublicURL+"/mcp", time.Now().Add(time.Hour))
	e.canaries.secret("access token", tok)
	return tok
}

// legacyToken issues a legacy project token (memory/task scopes).
func (e *testEnv) legacyToken(tn tenant) string {
	e.t.Helper()
	tok := e.secrets.Mint(oauth.PrefixLegacy, time.Time{})
	h := sha256.Sum256([]byte(tok))
	e.exec(`INSERT INTO legacy_tokens (project_id, name, token_hash, scopes)
		VALUES ($1, 'legacy', $2, ARRAY['memory:read','memory:write','tasks:read','tasks:write'])`, tn.project, h[:])
	e.canaries.secret("legacy token", tok)
	return tok
}

type reply struct {
	status int
	header http.Header
	raw    []byte
	body   map[string]any
}

// post sends one raw body to /mcp with the given headers.
func (e *testEnv) post(body string, headers ...string) reply {
	e.t.Helper()
	return e.postBody("/mcp", "application/json", body, headers...)
}

var rpcID atomic.Int64

// rpc sends a JSON-RPC request with a bearer token.
func (e *testEnv) rpc(token, method string, params any) reply {
	e.t.Helper()
	msg := map[string]any{"jsonrpc": "2.0", "id": rpcID.Add(1), "method": method}
	if params != nil {
		msg["params"] = params
	}
	b, _ := json.Marshal(msg)
	return e.post(string(b), "Authorization", "Bearer "+token)
}

// call runs tools/call and returns the structured content, whether it is an
// error, and the raw result JSON.
func (e *testEnv) call(token, tool string, args map[string]any) (map[string]any, bool, string) {
	e.t.Helper()
	r := e.rpc(token, "tools/call", map[string]any{"name": tool, "arguments": args})
	if r.status != http.StatusOK {
		e.t.Fatalf("tools/call %s: HTTP %d %s", tool, r.status, r.raw)
	}
	// Every tool result is sent with its length, large ones too (no chunking).
	if cl := r.header.Get("Content-Length"); cl != strconv.Itoa(len(r.raw)) {
		e.t.Fatalf("tools/call %s: Content-Length %q for %d bytes", tool, cl, len(r.raw))
	}
	res, _ := r.body["result"].(map[string]any)
	if res == nil {
		e.t.Fatalf("tools/call %s: no result: %s", tool, r.raw)
	}
	sc, _ := res["structuredContent"].(map[string]any)
	isErr, _ := res["isError"].(bool)
	resJSON, _ := json.Marshal(res)
	if cur, ok := sc["next_cursor"].(string); ok {
		e.canaries.secret("cursor", cur)
	}
	if content, ok := sc["content"].(string); ok {
		e.canaries.content("document content", content)
	}
	return sc, isErr, string(resJSON)
}

// wantCode fails unless the tool call failed with code.
func (e *testEnv) wantCode(token, tool string, args map[string]any, code string) map[string]any {
	e.t.Helper()
	sc, isErr, raw := e.call(token, tool, args)
	errObj, _ := sc["error"].(map[string]any)
	if !isErr || errObj["code"] != code {
		e.t.Fatalf("%s(%v) = %s, want error %s", tool, args, raw, code)
	}
	return sc
}

func (e *testEnv) countRows(table string) int {
	e.t.Helper()
	n, _ := strconv.Atoi(e.queryString(`SELECT count(*)::text FROM ` + table))
	return n
}
