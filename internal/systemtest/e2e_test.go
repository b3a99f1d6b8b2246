package systemtest

// The end-to-end test of the whole contract, in Go. HEYAIRA_F1_E2E_DATABASE_URL names a fresh
// database (scripts/test always creates one); the test migrates it through the
// real admin CLI, inserts synthetic project/OAuth/allowlist state, starts the
// MCP server through the real run with the fake GitHub, verifies bootstrap and
// a continuation, revokes the source between reads, and confirms that a legacy
// token is denied before the provider is called.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"heyaira/github/githubtest"
	"heyaira/internal/logbuf"
	"heyaira/oauth"
	"heyaira/store/storetest"
)

const e2eCommit = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

// mcpClient posts JSON-RPC messages with one bearer token.
type mcpClient struct {
	t     *testing.T
	url   string
	token string
	id    int
}

type mcpReply struct {
	status int
	header http.Header
	body   map[string]any
}

func (c *mcpClient) post(method string, params any) mcpReply {
	c.t.Helper()
	c.id++
	msg := map[string]any{"jsonrpc": "2.0", "id": c.id, "method": method}
	if params != nil {
		msg["params"] = params
	}
	b, _ := json.Marshal(msg)
	req, _ := http.NewRequest("POST", c.url, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	r := mcpReply{status: resp.StatusCode, header: resp.Header}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &r.body); err != nil {
			c.t.Fatalf("%s: response is not JSON: %s", method, raw)
		}
	}
	return r
}

// callTool calls a tool and returns its structuredContent and isError.
func (c *mcpClient) callTool(name string, args map[string]any) (map[string]any, bool) {
	c.t.Helper()
	r := c.post("tools/call", map[string]any{"name": name, "arguments": args})
	if r.status != http.StatusOK {
		c.t.Fatalf("tools/call %s: HTTP %d %v", name, r.status, r.body)
	}
	res, _ := r.body["result"].(map[string]any)
	if res == nil {
		c.t.Fatalf("tools/call %s: no result: %v", name, r.body)
	}
	sc, _ := res["structuredContent"].(map[string]any)
	isErr, _ := res["isError"].(bool)
	return sc, isErr
}

func errorCode(sc map[string]any) string {
	e, _ := sc["error"].(map[string]any)
	code, _ := e["code"].(string)
	return code
}

func sha(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// Rows AZ-03, AZ-08, AZ-11 (docs/security-tests.md).
func TestSeedEndToEnd(t *testing.T) {
	dbURL := storetest.BaseURL(t) // the fresh database scripts/test made for this test
	gh := githubtest.New(t)
	env := baseEnv(t, dbURL)
	env["HEYAIRA_GITHUB_APP_ID"] = githubtest.AppID
	env["HEYAIRA_GITHUB_APP_PRIVATE_KEY_FILE"] = writeFile(t, "app.pem", string(githubtest.KeyPEM()), 0o600)

	// Administrator: migrate, tenant, repository, allowlist — all through the real CLI.
	adminRun(t, env, "migrate")
	tn := adminTenant(t, env, "E2E", "Ada")
	project, person := tn.project, tn.person
	// The document: ~10 KB mixing 1-, 2-, 3- and 4-byte characters.
	doc := []byte(strings.Repeat("Continuity: a é € 😀 — ", 400))
	source := allowlist(t, env, gh, project, "docs/CONTINUITY_PROTOCOL.md", e2eCommit, 4096, doc)
	legacy := str(t, adminRun(t, env, "issue-legacy-token", "--project-id", project, "--name", "old agent"), "token")

	// Synthetic OAuth state: a client, a grant with documents:read, an access token.
	var logs logbuf.Buffer
	base, _ := startServe(t, env, fakeGitHub(gh), &logs)
	access := newToken(t, oauth.PrefixAccess, time.Hour)
	storetest.InsertAccessToken(t, dbURL, person, project, base+"/mcp", access, []string{"documents:read", "memory:read"})

	c := &mcpClient{t: t, url: base + "/mcp", token: access}
	if r := c.post("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "e2e", "version": "1"}}); r.status != 200 {
		t.Fatalf("initialize: %d %v", r.status, r.body)
	}

	boot, isErr := c.callTool("runtime_bootstrap_get", map[string]any{})
	if isErr {
		t.Fatalf("runtime_bootstrap_get: %v", boot)
	}
	sources, _ := boot["sources"].([]any)
	if len(sources) != 1 || sources[0].(map[string]any)["source_id"] != source {
		t.Fatalf("bootstrap sources = %v, want the one source %s", sources, source)
	}

	// First fragment, then continue with next_cursor until the end.
	var got []byte
	args := map[string]any{"source_id": source}
	cursors := []string{}
	for i := 0; ; i++ {
		res, isErr := c.callTool("git_document_get", args)
		if isErr {
			t.Fatalf("git_document_get #%d: %v", i, res)
		}
		content := []byte(res["content"].(string))
		rng := res["range"].(map[string]any)
		if int(rng["start_byte"].(float64)) != len(got) || len(content) > 4096 || !utf8.Valid(content) {
			t.Fatalf("fragment #%d: range %v, %d bytes", i, rng, len(content))
		}
		if res["fragment_sha256"] != sha(content) || res["sha256"] != sha(doc) {
			t.Fatalf("fragment #%d: wrong hashes", i)
		}
		got = append(got, content...)
		next, ok := res["next_cursor"].(string)
		if !ok {
			break
		}
		cursors = append(cursors, next)
		args = map[string]any{"source_id": source, "cursor": next}
	}
	if !bytes.Equal(got, doc) {
		t.Fatalf("reassembled %d bytes, want the original %d", len(got), len(doc))
	}

	// Revoke the source between reads: the continuation re-checks authorization.
	adminRun(t, env, "revoke-document-source", "--source-id", source)
	res, isErr := c.callTool("git_document_get", map[string]any{"source_id": source, "cursor": cursors[0]})
	if !isErr || errorCode(res) != "source_revoked" {
		t.Fatalf("continuation after revocation = %v, want source_revoked", res)
	}

	// A legacy token is denied before the provider is called.
	before := gh.Count(githubtest.RouteContents)
	lc := &mcpClient{t: t, url: base + "/mcp", token: legacy}
	r := lc.post("tools/call", map[string]any{"name": "git_document_get", "arguments": map[string]any{"source_id": source}})
	if r.status != http.StatusForbidden || !strings.Contains(r.header.Get("WWW-Authenticate"), `scope="documents:read `) {
		t.Fatalf("legacy token on git_document_get: %d %q, want 403 insufficient_scope", r.status, r.header.Get("WWW-Authenticate"))
	}
	if after := gh.Count(githubtest.RouteContents); after != before {
		t.Fatalf("legacy token caused %d provider requests", after-before)
	}

	// The MCP bearer tokens never reached GitHub.
	for _, tok := range []string{access, legacy} {
		if gh.SawAuthorization("Bearer " + tok) {
			t.Errorf("the fake GitHub received an MCP bearer token")
		}
	}
	// Nothing secret or content-bearing is in the logs.
	logText := logs.String()
	for _, canary := range append([]string{access, legacy, "Continuity: a é", "Continuity: a \\u00e9"}, cursors...) {
		if strings.Contains(logText, canary) {
			t.Errorf("logs contain a secret or content: %.40q", canary)
		}
	}
}
