package systemtest

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"heyaira/store/storetest"
)

// chromiumPath is Debian's chromium, which scripts/test installs.
func chromiumPath(t *testing.T) string {
	t.Helper()
	const p = "/usr/bin/chromium"
	if _, err := os.Stat(p); err != nil {
		storetest.Missing(t, "skipped: %s is missing; install Debian's chromium package or run scripts/test, which does", p)
	}
	return p
}

// artifactsDir is .data/artifacts/ (gitignored), where tests leave files
// for people to look at: the browser test's screenshots.
func artifactsDir(t *testing.T) string {
	t.Helper()
	dir, _ := filepath.Abs(".data/artifacts")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// callbackServer is the loopback redirect URI a native MCP client would
// listen on: it hands the query of the first request to /callback to the
// test and shows the browser a short page.
func callbackServer(t *testing.T) (string, <-chan url.Values) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan url.Values, 1)
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/callback" {
			http.NotFound(w, r)
			return
		}
		select {
		case got <- r.URL.Query():
		default:
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, "<!doctype html><title>Done</title><h1>Authorization received</h1><p>You can close this window.</p>")
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String() + "/callback", got
}

func postOAuth(t *testing.T, endpoint string, contentType string, body []byte) (int, http.Header, map[string]any) {
	t.Helper()
	resp, err := http.Post(endpoint, contentType, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	raw, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("POST %s: %d, not JSON: %s", endpoint, resp.StatusCode, raw)
	}
	return resp.StatusCode, resp.Header, out
}

// TestBrowserSigninAndConsent has a real browser (Debian's headless
// Chromium, driven by playwright-core through scripts/js/browser-flow.mjs)
// go through the flow as a person would: the authorization URL sends it to
// the sign-in prompt; the one-time link shows a button, which signs in and
// returns to the authorization request; the consent page shows every scope
// with documents:read unticked in its own box; ticking all and approving
// lands on the loopback redirect URI this test serves. The test then redeems
// the code with its PKCE verifier and reads a document with the token, which
// proves the pages work in a browser (cookies, CSRF, forms, 303s, CSP that
// still lets the forms post) and produce a working code. Screenshots of the
// sign-in, consent and callback pages are kept in artifacts/.
func TestBrowserSigninAndConsent(t *testing.T) {
	t.Parallel()
	browser := chromiumPath(t)
	jsDir(t)
	f := newInteropFixture(t)
	redirectURI, codes := callbackServer(t)

	// The client registers (RFC 7591) and builds the authorization URL.
	reg, _ := json.Marshal(map[string]any{"client_name": "Chromium interop test", "redirect_uris": []string{redirectURI}})
	status, _, client := postOAuth(t, f.base+"/oauth/register", "application/json", reg)
	if status != http.StatusCreated {
		t.Fatalf("register: %d %v", status, client)
	}
	clientID, _ := client["client_id"].(string)
	secret := make([]byte, 32)
	rand.Read(secret)
	verifier := base64.RawURLEncoding.EncodeToString(secret) // 43 characters, RFC 7636
	sum := sha256.Sum256([]byte(verifier))
	state := rand.Text()
	q := url.Values{"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {redirectURI},
		"code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"},
		"state": {state}, "resource": {f.base + "/mcp"},
		"scope": {"memory:read memory:write tasks:read tasks:write documents:read workflows:read workflows:write"}}

	artifacts := artifactsDir(t)
	out := runNode(t, "browser-flow.mjs", map[string]any{
		"authorizeURL": f.base + "/oauth/authorize?" + q.Encode(), "signinURL": f.signinLink(t),
		"callbackURL": redirectURI, "artifactsDir": artifacts, "userDataDir": t.TempDir(), "chromium": browser,
	}, 3*time.Minute)
	for _, name := range []string{"signin", "consent", "callback"} {
		t.Logf("screenshot of the %s page: %s", name, at(out, "screenshots", name))
	}
	t.Logf("browser %v; consent page text: %v", at(out, "browserVersion"), at(out, "consent", "text"))

	want := func(name string, got, want any) {
		t.Helper()
		if !jsonEqual(got, want) {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	want("prompt", at(out, "prompt"), map[string]any{"status": 200.0, "path": "/signin", "h1": "Sign in to HeyAira"})
	want("signin", at(out, "signin"), map[string]any{"status": 200.0, "h1": "Sign in to HeyAira", "button": 1.0})
	want("consent.path", at(out, "consent", "path"), "/oauth/authorize")
	want("consent.h1", at(out, "consent", "h1"), "Authorize Chromium interop test?")
	want("consent.projects", at(out, "consent", "projects"), 1.0)
	want("consent.documentsLegend", at(out, "consent", "documentsLegend"), "Documents")
	want("consent.scopes", at(out, "consent", "scopes"), []any{
		map[string]any{"name": "memory:read", "checked": true}, map[string]any{"name": "memory:write", "checked": true},
		map[string]any{"name": "tasks:read", "checked": true}, map[string]any{"name": "tasks:write", "checked": true},
		map[string]any{"name": "workflows:read", "checked": true}, map[string]any{"name": "workflows:write", "checked": true},
		map[string]any{"name": "documents:read", "checked": false},
	})
	text, _ := at(out, "consent", "text").(string)
	for _, s := range []string{"Grace Hopper", "127.0.0.1", "Interop project", "not verified", clientID} {
		if !strings.Contains(text, s) {
			t.Errorf("the consent page does not show %q:\n%s", s, text)
		}
	}
	want("callback.target", at(out, "callback", "target"), redirectURI)
	if txt, _ := at(out, "callback", "text").(string); !strings.Contains(txt, "Authorization received") {
		t.Errorf("the browser did not land on the callback page: %q", txt)
	}
	for _, name := range []string{"signin", "consent", "callback"} {
		p, _ := at(out, "screenshots", name).(string)
		if st, err := os.Stat(p); err != nil || st.Size() < 1000 {
			t.Errorf("screenshot %s missing or empty: %v", name, err)
		}
	}

	// What the browser brought to the redirect URI.
	var cb url.Values
	select {
	case cb = <-codes:
	case <-time.After(5 * time.Second):
		t.Fatal("the callback server received nothing")
	}
	if cb.Get("state") != state || cb.Get("iss") != f.base || cb.Get("error") != "" || len(cb["code"]) != 1 {
		t.Fatalf("callback query: state ok %v, iss %q, error %q, %d codes", cb.Get("state") == state,
			cb.Get("iss"), cb.Get("error"), len(cb["code"]))
	}

	// The code works: redeem it with the verifier, then read a document.
	form := url.Values{"grant_type": {"authorization_code"}, "code": {cb.Get("code")}, "code_verifier": {verifier},
		"redirect_uri": {redirectURI}, "client_id": {clientID}, "resource": {f.base + "/mcp"}}
	status, hdr, tok := postOAuth(t, f.base+"/oauth/token", "application/x-www-form-urlencoded", []byte(form.Encode()))
	if status != http.StatusOK || tok["token_type"] != "Bearer" || hdr.Get("Cache-Control") != "no-store" {
		t.Fatalf("token exchange: %d %q %v", status, hdr.Get("Cache-Control"), tok["error"])
	}
	scopes := strings.Fields(tok["scope"].(string))
	if !slices.Contains(scopes, "documents:read") || len(scopes) != 7 {
		t.Errorf("token scope = %q, want all seven, documents:read included", tok["scope"])
	}
	c := &mcpClient{t: t, url: f.base + "/mcp", token: tok["access_token"].(string)}
	res, isErr := c.callTool("git_document_get", map[string]any{"source_id": f.source})
	if isErr || res["content"] != string(f.doc) || res["sha256"] != sha(f.doc) {
		t.Errorf("git_document_get with the browser flow's token: isError %v, %v", isErr, res["error"])
	}
}
