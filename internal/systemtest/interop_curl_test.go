package systemtest

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The README's route to documents with curl alone ("Connect a client",
// "With curl alone"): its commands, run as written against a real server,
// with scripts/connect-curl doing the OAuth flow.

// readmeConnectSection is README.md's "Connect a client" section.
func readmeConnectSection(t *testing.T) string { return readmeSection(t, "Connect a client") }

// readmeSection is the section of README.md under "## " + heading.
func readmeSection(t *testing.T, heading string) string {
	t.Helper()
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	section := string(readme)
	i := strings.Index(section, "\n## "+heading+"\n")
	if i < 0 {
		t.Fatalf("README has no %q section", heading)
	}
	section = section[i+1:]
	if j := strings.Index(section[3:], "\n## "); j >= 0 {
		section = section[:j+3]
	}
	return section
}

// readmeCurlBlock is the sh block of README.md's "Connect a client" section
// that runs scripts/connect-curl.
func readmeCurlBlock(t *testing.T) string {
	t.Helper()
	section := readmeConnectSection(t)
	for _, m := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(section, -1) {
		if strings.Contains(m[1], "scripts/connect-curl") {
			return m[1]
		}
	}
	t.Fatal(`"Connect a client" has no sh block running scripts/connect-curl`)
	return ""
}

// curlRouteShell returns a bash command in the repository root with PATH
// holding heyaira and heyaira-admin (built from this tree) and the admin
// CLI's environment of f.
func curlRouteShell(t *testing.T, f *interopFixture, bin string, script string) *exec.Cmd {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "bash", "-euo", "pipefail", "-c", script)
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"HEYAIRA_DATABASE_URL="+f.env["HEYAIRA_DATABASE_URL"], "HEYAIRA_PUBLIC_URL="+f.base,
		"HEYAIRA_CURSOR_KEY_FILE="+f.env["HEYAIRA_CURSOR_KEY_FILE"])
	return cmd
}

// buildHeyAira builds the production binary into a directory of its own,
// with heyaira-admin beside it, and returns the directory.
func buildHeyAira(t *testing.T) string {
	t.Helper()
	bin := t.TempDir()
	cmd := exec.CommandContext(t.Context(), "go", "build", "-o", filepath.Join(bin, "heyaira"), ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	if err := os.Symlink("heyaira", filepath.Join(bin, "heyaira-admin")); err != nil {
		t.Fatal(err)
	}
	return bin
}

var signinLinkRE = regexp.MustCompile(`https?://[^\s'"]+/signin\?token=[A-Za-z0-9_-]+`)

// TestInteropCurlRoute runs the README's curl block as written, with
// http://127.0.0.1:8080 replaced by the test server's URL and its two
// placeholders filled as a user would fill them: the principal's id, and
// the link that the block's first command printed. The block signs in with
// the link, approves documents:read, exchanges the code with PKCE, and
// reads the allowlisted document with curl.
func TestInteropCurlRoute(t *testing.T) {
	t.Parallel()
	block := readmeCurlBlock(t)
	f := newInteropFixture(t)
	bin := buildHeyAira(t)
	block = strings.ReplaceAll(block, "http://127.0.0.1:8080", f.base)

	// The part before connect-curl makes the sign-in link.
	i := strings.Index(block, "scripts/connect-curl")
	i = strings.LastIndex(block[:i], "\n") + 1
	first, rest := block[:i], block[i:]
	if !strings.Contains(first, "heyaira-admin signin-link --principal-id <principal-id>") {
		t.Fatalf("the block does not start with the sign-in link command:\n%s", block)
	}
	out, err := curlRouteShell(t, f, bin, strings.ReplaceAll(first, "<principal-id>", f.principal)).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", first, err, out)
	}
	link := signinLinkRE.FindString(string(out))
	if link == "" {
		t.Fatalf("no sign-in link in the output of %s:\n%s", first, out)
	}

	for _, placeholder := range []string{"<sign-in link>", "<source-id>"} {
		if !strings.Contains(rest, placeholder) {
			t.Fatalf("the block has no %s:\n%s", placeholder, rest)
		}
	}
	rest = strings.ReplaceAll(rest, "<sign-in link>", link)
	rest = strings.ReplaceAll(rest, "<source-id>", f.source)
	cmd := curlRouteShell(t, f, bin, rest)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err = cmd.Output()
	t.Logf("stderr:\n%s", stderr.String())
	if err != nil {
		t.Fatalf("%s: %v\n%s", rest, err, out)
	}
	// runtime_bootstrap_get names the source that the next call reads, and
	// git_document_get returns it with its SHA-256.
	sum := sha256.Sum256(f.doc)
	for _, want := range []string{f.source, hex.EncodeToString(sum[:]), "documents:read"} {
		if !strings.Contains(string(out)+stderr.String(), want) {
			t.Errorf("the block's output lacks %s:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), `"isError":true`) {
		t.Errorf("a tool call failed:\n%s", out)
	}
}

// TestInteropCurlRouteBrowser runs scripts/connect-curl without a sign-in
// link, as the README shows it: it prints the authorization URL, the test
// plays the browser (sign-in, consent with documents:read ticked, the 303
// to the loopback redirect that nothing listens on), pastes the address the
// browser was sent to, and gets a token that reads the document.
func TestInteropCurlRouteBrowser(t *testing.T) {
	t.Parallel()
	section := readmeConnectSection(t)
	for _, want := range []string{"`scripts/connect-curl http://127.0.0.1:8080/mcp`", "`http://127.0.0.1:8976/callback?code=…`"} {
		if !strings.Contains(section, want) {
			t.Fatalf("the README does not show %s", want)
		}
	}
	f := newInteropFixture(t)
	cmd := exec.CommandContext(t.Context(), filepath.Join("scripts", "connect-curl"), f.base+"/mcp")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderrPipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	lines := bufio.NewScanner(stderrPipe)
	authURL := ""
	for authURL == "" && lines.Scan() {
		log.WriteString(lines.Text() + "\n")
		if strings.HasPrefix(lines.Text(), f.base+"/oauth/authorize?") {
			authURL = lines.Text()
		}
	}
	if authURL == "" {
		cmd.Wait()
		t.Fatalf("connect-curl printed no authorization URL:\n%s", log.String())
	}

	// The browser.
	jar, _ := cookiejar.New(nil)
	b := &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(u string) (*http.Response, string) {
		t.Helper()
		resp, err := b.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp, string(body)
	}
	resp, page := get(authURL)
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("authorization URL without a session: %d, want 303 to /signin\n%s", resp.StatusCode, page)
	}
	_, form := get(f.signinLink(t))
	v := url.Values{}
	for _, m := range signinRE.FindAllStringSubmatch(form, -1) {
		v.Set(m[1], html.UnescapeString(m[2]))
	}
	r, err := b.PostForm(f.base+"/signin", v)
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	resp, page = get(f.base + r.Header.Get("Location"))
	if resp.StatusCode != http.StatusOK || !strings.Contains(page, `value="documents:read"`) {
		t.Fatalf("consent page: %d\n%s", resp.StatusCode, page)
	}
	answer := withDecision(page, "approve", true)
	answer.Add("scope", "documents:read") // the user ticks it
	r, err = b.PostForm(f.base+"/oauth/authorize", answer)
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	landed := r.Header.Get("Location")
	if r.StatusCode != http.StatusSeeOther || !strings.HasPrefix(landed, "http://127.0.0.1:8976/callback?") {
		t.Fatalf("consent answer: %d Location %q", r.StatusCode, landed)
	}
	if _, err := io.WriteString(stdin, landed+"\n"); err != nil {
		t.Fatal(err)
	}
	stdin.Close()
	for lines.Scan() {
		log.WriteString(lines.Text() + "\n")
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("connect-curl: %v\n%s", err, log.String())
	}
	token := strings.TrimSpace(stdout.String())
	if !strings.HasPrefix(token, "hya_") || strings.Contains(token, "\n") {
		t.Fatalf("stdout is not one access token: %q\n%s", stdout.String(), log.String())
	}
	c := &mcpClient{t: t, url: f.base + "/mcp", token: token}
	res, isErr := c.callTool("git_document_get", map[string]any{"source_id": f.source})
	if isErr {
		t.Fatalf("git_document_get with the token: %v", res)
	}
	sum := sha256.Sum256(f.doc)
	if res["sha256"] != hex.EncodeToString(sum[:]) {
		t.Errorf("git_document_get: sha256 %v, want %x", res["sha256"], sum)
	}
}
