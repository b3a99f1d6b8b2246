// Package servertest runs the whole server for tests: New starts NewServer
// on httptest over a fresh migrated database and the fake GitHub, with a
// clock that stands still and a logger whose output is scanned for leaked
// secrets when the test ends (canary.go). Env's helpers make tenants,
// sources and tokens, and send MCP requests; oauth_harness.go is a browser
// and a hand-written OAuth client for the sign-in and authorization flow.
// The tests of package server and of its subpackages share it.
package servertest

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
	"heyaira/server"
	"heyaira/store"
	"heyaira/store/storetest"

	"github.com/lib/pq"
)

// Env is a real server (NewServer) on httptest, a fresh migrated
// database, the fake GitHub and a capturing logger.
type Env struct {
	T       testing.TB
	DB      *store.DB
	GH      *githubtest.Server
	Srv     *httptest.Server
	Cursors *cursor.Codec
	Logs    *logbuf.Buffer
	Cfg     server.Config
	// Clock is Cfg.Now unless a mutator replaced it: it stands still
	// until the test advances it.
	Clock *StillClock
	// Canaries are the tokens, cursors and content this test handled; no
	// spelling of any may reach the log (LG-01, checked at cleanup).
	Canaries *CanarySet
	Secrets  *oauth.Secrets // the server's: what it mints, tests mint too
}

func New(t testing.TB, mutate ...func(*server.Config)) *Env {
	t.Helper()
	return NewOn(t, storetest.New(t), nil, mutate...)
}

// NewGitHub is New with options for the server's GitHub
// client (by default the fake's: 10 s timeout, the fake's clock).
func NewGitHub(t testing.TB, ghOpts []githubtest.Option, mutate ...func(*server.Config)) *Env {
	t.Helper()
	return NewOn(t, storetest.New(t), ghOpts, mutate...)
}

// NewOn is New on the store db (one whose traffic a test
// counts, say), with options for the server's GitHub client.
func NewOn(t testing.TB, db *store.DB, ghOpts []githubtest.Option, mutate ...func(*server.Config)) *Env {
	t.Helper()
	e := &Env{T: t, DB: db, GH: githubtest.New(t), Logs: &logbuf.Buffer{}, Canaries: &CanarySet{}}
	var err error
	if e.Cursors, err = cursor.NewCodec(bytes.Repeat([]byte{7}, 32)); err != nil {
		t.Fatal(err)
	}
	e.Secrets = oauth.NewSecrets(e.Cursors.Derive(oauth.KeyLabel))
	e.Srv = httptest.NewUnstartedServer(nil)
	e.Clock = NewClock()
	e.Cfg = server.Config{PublicURL: "http://" + e.Srv.Listener.Addr().String(), Version: "test", Now: e.Clock.Now}
	for _, m := range mutate {
		m(&e.Cfg)
	}
	logger := slog.New(slog.NewJSONHandler(e.Logs, nil))
	e.Srv.Config.Handler = server.NewServer(logger, e.Cfg, e.DB, e.GH.Client(ghOpts...), e.Cursors)
	e.Srv.Start()
	t.Cleanup(e.Srv.Close)
	// Runs before srv.Close (cleanups are last in, first out), when every
	// request of the test has been answered and logged.
	t.Cleanup(func() {
		for _, leak := range e.Canaries.Find(e.Logs.String()) {
			t.Errorf("LG-01: the log holds %s", leak)
		}
	})
	return e
}

// Tenant is one project with a member principal and a linked repository.
type Tenant struct {
	Account, Project, Principal, Repo string
	owner, repoName                   string
	Installation                      int64
}

func (e *Env) Exec(q string, args ...any) {
	e.T.Helper()
	if _, err := e.DB.SQL().Exec(q, args...); err != nil {
		e.T.Fatalf("%s: %v", q, err)
	}
}

func (e *Env) QueryString(q string, args ...any) string {
	e.T.Helper()
	var s string
	if err := e.DB.SQL().QueryRow(q, args...).Scan(&s); err != nil {
		e.T.Fatalf("%s: %v", q, err)
	}
	return s
}

// NewTenant creates account, project, principal (a member) and links owner/repo.
func (e *Env) NewTenant(owner, repo string) Tenant {
	e.T.Helper()
	tn := Tenant{owner: owner, repoName: repo, Installation: e.GH.Binding(owner, repo).InstallationID}
	tn.Account = e.QueryString(`INSERT INTO accounts (name) VALUES ('acct') RETURNING id`)
	tn.Project = e.QueryString(`INSERT INTO projects (account_id, name) VALUES ($1, 'proj') RETURNING id`, tn.Account)
	tn.Principal = e.QueryString(`INSERT INTO principals (account_id, name) VALUES ($1, 'ada') RETURNING id`, tn.Account)
	e.Exec(`INSERT INTO project_members (project_id, principal_id) VALUES ($1, $2)`, tn.Project, tn.Principal)
	tn.Repo = e.QueryString(`INSERT INTO repositories (project_id, github_owner, github_repository, github_installation_id)
		VALUES ($1, $2, $3, $4) RETURNING id`, tn.Project, owner, repo, tn.Installation)
	return tn
}

// AddSource allowlists path at commit (or tracking branch if commit is "").
func (e *Env) AddSource(tn Tenant, role, path, commit, tracking string, limit int) string {
	e.T.Helper()
	var c, tr any
	if commit != "" {
		c = commit
	}
	if tracking != "" {
		tr = tracking
	}
	return e.QueryString(`INSERT INTO document_sources (project_id, repository_id, role, path, commit_sha, tracking_ref, fragment_limit)
		VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`, tn.Project, tn.Repo, role, path, c, tr, limit)
}

// Token issues an OAuth access token for the tenant's principal with scopes.
func (e *Env) Token(tn Tenant, scopes ...string) string {
	e.T.Helper()
	client := e.QueryString(`INSERT INTO oauth_clients (client_name, redirect_uris)
		VALUES ('test', ARRAY['http://127.0.0.1/cb']) RETURNING id`)
	grant := e.QueryString(`INSERT INTO oauth_grants (client_id, principal_id, project_id, scopes)
		VALUES ($1, $2, $3, $4) RETURNING id`, client, tn.Principal, tn.Project, pq.Array(scopes))
	tok := e.Secrets.Mint(oauth.PrefixAccess, time.Now().Add(time.Hour))
	h := sha256.Sum256([]byte(tok))
	e.Exec(`INSERT INTO oauth_tokens (token_hash, kind, grant_id, scopes, resource, family_id, expires_at)
		VALUES ($1, 'access', $2, $3, $4, gen_random_uuid(), $5)`,
		h[:], grant, pq.Array(scopes), e.Cfg.PublicURL+"/mcp", time.Now().Add(time.Hour))
	e.Canaries.Secret("access token", tok)
	return tok
}

// LegacyToken issues a legacy project token (memory/task scopes).
func (e *Env) LegacyToken(tn Tenant) string {
	e.T.Helper()
	tok := e.Secrets.Mint(oauth.PrefixLegacy, time.Time{})
	h := sha256.Sum256([]byte(tok))
	e.Exec(`INSERT INTO legacy_tokens (project_id, name, token_hash, scopes)
		VALUES ($1, 'legacy', $2, ARRAY['memory:read','memory:write','tasks:read','tasks:write'])`, tn.Project, h[:])
	e.Canaries.Secret("legacy token", tok)
	return tok
}

type Reply struct {
	Status int
	Header http.Header
	Raw    []byte
	Body   map[string]any
}

// Post sends one raw body to /mcp with the given headers.
func (e *Env) Post(body string, headers ...string) Reply {
	e.T.Helper()
	return e.PostBody("/mcp", "application/json", body, headers...)
}

var rpcID atomic.Int64

// RPC sends a JSON-RPC request with a bearer token.
func (e *Env) RPC(token, method string, params any) Reply {
	e.T.Helper()
	msg := map[string]any{"jsonrpc": "2.0", "id": rpcID.Add(1), "method": method}
	if params != nil {
		msg["params"] = params
	}
	b, _ := json.Marshal(msg)
	return e.Post(string(b), "Authorization", "Bearer "+token)
}

// Call runs tools/call and returns the structured content, whether it is an
// error, and the raw result JSON.
func (e *Env) Call(token, tool string, args map[string]any) (map[string]any, bool, string) {
	e.T.Helper()
	r := e.RPC(token, "tools/call", map[string]any{"name": tool, "arguments": args})
	if r.Status != http.StatusOK {
		e.T.Fatalf("tools/call %s: HTTP %d %s", tool, r.Status, r.Raw)
	}
	// Every tool result is sent with its length, large ones too (no chunking).
	if cl := r.Header.Get("Content-Length"); cl != strconv.Itoa(len(r.Raw)) {
		e.T.Fatalf("tools/call %s: Content-Length %q for %d bytes", tool, cl, len(r.Raw))
	}
	res, _ := r.Body["result"].(map[string]any)
	if res == nil {
		e.T.Fatalf("tools/call %s: no result: %s", tool, r.Raw)
	}
	sc, _ := res["structuredContent"].(map[string]any)
	isErr, _ := res["isError"].(bool)
	resJSON, _ := json.Marshal(res)
	if cur, ok := sc["next_cursor"].(string); ok {
		e.Canaries.Secret("cursor", cur)
	}
	if content, ok := sc["content"].(string); ok {
		e.Canaries.Content("document content", content)
	}
	return sc, isErr, string(resJSON)
}

// WantCode fails unless the tool call failed with code.
func (e *Env) WantCode(token, tool string, args map[string]any, code string) map[string]any {
	e.T.Helper()
	sc, isErr, raw := e.Call(token, tool, args)
	errObj, _ := sc["error"].(map[string]any)
	if !isErr || errObj["code"] != code {
		e.T.Fatalf("%s(%v) = %s, want error %s", tool, args, raw, code)
	}
	return sc
}

func (e *Env) CountRows(table string) int {
	e.T.Helper()
	n, _ := strconv.Atoi(e.QueryString(`SELECT count(*)::text FROM ` + table))
	return n
}
