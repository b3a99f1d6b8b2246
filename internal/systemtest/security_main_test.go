package systemtest

// Attack-matrix rows that concern what only the program as a whole sees:
// its environment, its secret files, its start-up messages and its
// http.Server (docs/security-tests.md maps every row).

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"heyaira/admin"
	"heyaira/github/githubtest"
	"heyaira/internal/app"
	"heyaira/internal/logbuf"
	"heyaira/oauth"
	"heyaira/store/storetest"
)

// leakForms returns the spellings of a secret a log or message could
// carry: raw, base64 (standard and URL, padded or not), percent-encoded,
// JSON-escaped and every 12-byte substring (docs/security-tests.md LG-01).
func leakForms(s string) []string {
	b := []byte(s)
	j, _ := json.Marshal(s)
	forms := []string{s, base64.StdEncoding.EncodeToString(b), base64.RawStdEncoding.EncodeToString(b),
		base64.URLEncoding.EncodeToString(b), base64.RawURLEncoding.EncodeToString(b),
		url.QueryEscape(s), url.PathEscape(s), strings.Trim(string(j), `"`)}
	for i := 0; i+12 <= len(s); i++ {
		forms = append(forms, s[i:i+12])
	}
	return forms
}

func assertNoLeak(t *testing.T, where, hay string, secrets map[string]string) {
	t.Helper()
	for name, s := range secrets {
		for _, f := range leakForms(s) {
			if strings.Contains(hay, f) {
				t.Errorf("%s holds the %s (as %.20q…)", where, name, f)
				break
			}
		}
	}
}

// Row AZ-11 (configuration): the program reads only the documented
// variables, none of which can move the GitHub base URL; a plausible
// HEYAIRA_GITHUB_BASE_URL has no effect (the read still reaches the fake
// that the test wired in code).
func TestAZ11OnlyDocumentedEnvironment(t *testing.T) {
	t.Parallel()
	gh := githubtest.New(t)
	s := newLiveServer(t, storetest.NewURL(t), gh, app.Hooks{}, 100)
	documented := []string{"HEYAIRA_DATABASE_URL", "HEYAIRA_LISTEN_ADDR", "HEYAIRA_PUBLIC_URL", "HEYAIRA_CURSOR_KEY_FILE",
		"HEYAIRA_GITHUB_APP_ID", "HEYAIRA_GITHUB_APP_PRIVATE_KEY_FILE", "HEYAIRA_ALLOWED_ORIGINS", "HEYAIRA_METRICS_ADDR", "HEYAIRA_METRICS_PUBLIC",
		"HEYAIRA_CIMD_CLIENTS", "HEYAIRA_TRUSTED_PROXIES", "HEYAIRA_GITHUB_MAX_INFLIGHT", "HEYAIRA_REPLICAS", "HEYAIRA_DRAIN_SECONDS", "HEYAIRA_DB_WAIT_SECONDS",
		"HEYAIRA_DB_MAX_CONNS",
		"HEYAIRA_CIMD_HOSTS", // retired: read only to refuse it (docs/operating.md, "Upgrade")
		"GOGC"}               // Go's own (README: Configuration); serve reads it to leave the operator's target alone (gc.go)
	var mu sync.Mutex
	read := map[string]bool{}
	env := testEnv{}
	for k, v := range s.env {
		env[k] = v
	}
	env["HEYAIRA_GITHUB_BASE_URL"] = "http://127.0.0.1:9"
	env["GITHUB_API_URL"] = "http://127.0.0.1:9"
	recording := testEnv{}
	for k, v := range env {
		recording[k] = v
	}
	getenv := func(k string) string {
		mu.Lock()
		read[k] = true
		mu.Unlock()
		return recording[k]
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	var stderr logbuf.Buffer
	done := make(chan error, 1)
	go func() {
		hooks := fakeGitHub(gh)
		hooks.Listener = ln
		done <- app.Serve(ctx, getenv, &stderr, hooks)
	}()
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(stderr.String(), `"msg":"listening"`); {
		if time.Now().After(deadline) {
			t.Fatalf("serve did not start:\n%s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
	for k := range read {
		if !slices.Contains(documented, k) {
			t.Errorf("serve reads the undocumented variable %s", k)
		}
	}
	before := gh.Count(githubtest.RouteContents)
	c := newLoadClient(s.base)
	defer c.close()
	if o := c.toolCall(s.access, "git_document_get", map[string]any{"source_id": s.source}); !o.ok() {
		t.Fatalf("read: %+v", o)
	}
	if gh.Count(githubtest.RouteContents) != before+1 {
		t.Error("the read did not reach the GitHub wired in code")
	}
}

// Row PF-09(b, c): App credentials. PKCS#1 and PKCS#8 keys load; a key file
// that is group- or world-readable, owned by another user, a dangling or
// unprotected symlink, missing, or not PEM is refused with one start-up
// ERROR line that names the path and never the contents, and /readyz
// answers 200 "degraded" naming the problem (a WARN alone was
// easy to miss); document tools then answer provider_unconfigured (also
// with no App ID) while the other tools keep working. A symlink to a protected file is followed and its target
// checked (decision: secret volumes are symlinks; the target is what is
// read, and it must be protected).
func TestPF09AppKeyFiles(t *testing.T) {
	t.Parallel()
	gh := githubtest.New(t)
	// The fake's clock is frozen: set it back as far as a loaded machine
	// may take to reach the subtests, so that a server signing App JWTs by
	// the wall clock instead of the fake's fails here every time, not only
	// under load ("read provider_forbidden with 0 warnings").
	gh.Clock().Set(time.Now().Add(-90 * time.Second))
	s := newLiveServer(t, storetest.NewURL(t), gh, app.Hooks{}, 100)
	pkcs8, err := x509.MarshalPKCS8PrivateKey(githubtest.Key())
	if err != nil {
		t.Fatal(err)
	}
	pkcs8PEM := string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8}))
	notPEM := "NOT-A-PEM-CANARY-" + rand.Text()
	dir := t.TempDir()
	write := func(name, content string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(content), mode)
		os.Chmod(p, mode)
		return p
	}
	protected := write("good.pem", string(githubtest.KeyPEM()), 0o600)
	link := filepath.Join(dir, "link.pem")
	os.Symlink(protected, link)
	loose := write("loose.pem", string(githubtest.KeyPEM()), 0o644)
	looseLink := filepath.Join(dir, "looselink.pem")
	os.Symlink(loose, looseLink)
	dangling := filepath.Join(dir, "dangling.pem")
	os.Symlink(filepath.Join(dir, "nothing"), dangling)
	cases := []struct {
		name, path, appID string
		ok                bool
	}{
		{"PKCS#1", protected, githubtest.AppID, true},
		{"PKCS#8", write("pkcs8.pem", pkcs8PEM, 0o600), githubtest.AppID, true},
		{"symlink to a protected file", link, githubtest.AppID, true},
		{"mode 0644", loose, githubtest.AppID, false},
		{"mode 0640", write("group.pem", string(githubtest.KeyPEM()), 0o640), githubtest.AppID, false},
		{"symlink to a 0644 file", looseLink, githubtest.AppID, false},
		{"dangling symlink", dangling, githubtest.AppID, false},
		{"missing", filepath.Join(dir, "missing.pem"), githubtest.AppID, false},
		{"not PEM", write("junk.pem", notPEM, 0o600), githubtest.AppID, false},
		{"a directory", dir, githubtest.AppID, false},
		{"no App ID", protected, "", false},
	}
	if os.Geteuid() == 0 {
		other := write("other.pem", string(githubtest.KeyPEM()), 0o600)
		if err := os.Chown(other, 65534, 65534); err == nil {
			cases = append(cases, struct {
				name, path, appID string
				ok                bool
			}{"owned by another user", other, githubtest.AppID, false})
		}
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := testEnv{}
			for k, v := range s.env {
				env[k] = v
			}
			delete(env, "HEYAIRA_PUBLIC_URL")
			env["HEYAIRA_GITHUB_APP_PRIVATE_KEY_FILE"] = tc.path
			env["HEYAIRA_GITHUB_APP_ID"] = tc.appID
			var logs logbuf.Buffer
			base, _ := startServe(t, env, fakeGitHub(gh), &logs)
			tok := newToken(t, oauth.PrefixAccess, time.Hour)
			storetest.InsertAccessToken(t, s.dbURL, s.person, s.project, base+"/mcp", tok, []string{"documents:read", "memory:read"})
			c := newLoadClient(base)
			defer c.close()
			read := c.toolCall(tok, "git_document_get", map[string]any{"source_id": s.source})
			mem := c.toolCall(tok, "memory_get", map[string]any{"key": "none"})
			if mem.code != "not_found" {
				t.Errorf("memory tool: %s", mem.code)
			}
			warnings, errs := 0, 0
			for _, line := range strings.Split(logs.String(), "\n") {
				switch {
				case strings.Contains(line, `"level":"WARN"`):
					warnings++
				case strings.Contains(line, `"level":"ERROR"`):
					errs++
				}
			}
			ready := c.do("readyz", "GET", "/readyz", "", "")
			if tc.appID == "" {
				// No App ID: no App, whatever key path the unit sets; one WARN
				// line, the file unread, /readyz ok.
				if read.code != "provider_unconfigured" || errs != 0 || warnings != 1 || strings.TrimSpace(ready.body) != `{"status":"ok"}` ||
					strings.Contains(logs.String(), tc.path) {
					t.Errorf("read %s with %d warnings and %d errors, /readyz %s:\n%s", read.code, warnings, errs, ready.body, logs.String())
				}
				return
			}
			if tc.ok {
				if !read.ok() || warnings+errs != 0 || strings.TrimSpace(ready.body) != `{"status":"ok"}` {
					t.Errorf("read %s with %d warnings and %d errors, /readyz %s, want ok", read.code, warnings, errs, ready.body)
				}
				return
			}
			if read.code != "provider_unconfigured" {
				t.Errorf("read: %s, want provider_unconfigured", read.code)
			}
			// A configured App that cannot work is one ERROR line
			// (not a WARN that is easy to miss) and a degraded /readyz.
			if errs != 1 || warnings != 0 {
				t.Errorf("%d start-up errors and %d warnings, want 1 error:\n%s", errs, warnings, logs.String())
			}
			wantReady := `{"github":"app_key_refused","status":"degraded"}`
			if ready.status != 200 || strings.TrimSpace(ready.body) != wantReady {
				t.Errorf("/readyz: %d %s, want 200 %s", ready.status, ready.body, wantReady)
			}
			if !strings.Contains(logs.String(), tc.path) {
				t.Errorf("the warning does not name the path %s", tc.path)
			}
			secrets := map[string]string{"not-PEM canary": notPEM}
			for i, line := range strings.Split(string(githubtest.KeyPEM()), "\n") {
				if len(line) > 20 && !strings.HasPrefix(line, "-----") {
					secrets["key line "+string(rune('a'+i%26))] = line
				}
			}
			assertNoLeak(t, "the log", logs.String()+read.body, secrets)
		})
	}
}

// Row CR-01 (key file): serve refuses to start without a usable cursor key
// file — missing, group/world-accessible, owned by another user, a line
// that is not 32 bytes of hex — and says why by path, never by content.
func TestCR01CursorKeyFiles(t *testing.T) {
	t.Parallel()
	dbURL := storetest.NewMigratedURL(t)
	short := hex.EncodeToString([]byte("sixteen-byte-key")) // 16 bytes
	junk := "KEYCANARY-" + rand.Text()
	cases := map[string]func() string{
		"missing":          func() string { return filepath.Join(t.TempDir(), "nope.key") },
		"mode 0644":        func() string { return writeFile(t, "k", hexKey(), 0o644) },
		"mode 0604":        func() string { return writeFile(t, "k", hexKey(), 0o604) },
		"16-byte key line": func() string { return writeFile(t, "k", short+"\n", 0o600) },
		"not hex":          func() string { return writeFile(t, "k", junk+"\n", 0o600) },
		"empty":            func() string { return writeFile(t, "k", "", 0o600) },
	}
	if os.Geteuid() == 0 {
		cases["owned by another user"] = func() string {
			p := writeFile(t, "k", hexKey(), 0o600)
			os.Chown(p, 65534, 65534)
			return p
		}
	}
	for name, mk := range cases {
		path := mk()
		env := baseEnv(t, dbURL)
		env["HEYAIRA_CURSOR_KEY_FILE"] = path
		var stderr bytes.Buffer
		err := run(t.Context(), []string{"heyaira", "serve"}, env.get, nil, &bytes.Buffer{}, &stderr)
		if err == nil {
			t.Errorf("%s: serve started", name)
			continue
		}
		msg := err.Error() + stderr.String()
		if !strings.Contains(msg, path) {
			t.Errorf("%s: %q does not name the file", name, msg)
		}
		assertNoLeak(t, name+": the message", msg, map[string]string{"short key": short, "junk key": junk, "good key": strings.TrimSpace(hexKey())})
	}
}

// Row LG-01 for what only serve and the admin CLI see: the database
// password in the DSN, the cursor key and the App key never appear on
// stderr, in a start-up failure, or in a refused database URL; the admin
// CLI prints issued secrets once, on stdout, and nowhere else. Also LG-03:
// log times are UTC.
// Row LG-03 (docs/security-tests.md).
func TestLG01ServeSecretsStayOutOfOutput(t *testing.T) {
	t.Parallel()
	password := "PWCANARY" + rand.Text()
	keyHex := hex.EncodeToString([]byte(rand.Text() + rand.Text())[:32])
	dbURL := storetest.NewURL(t)
	u, _ := url.Parse(dbURL)
	u.User = url.UserPassword("postgres", password) // trust authentication ignores it
	withPW := u.String()
	gh := githubtest.New(t)
	s := newLiveServer(t, withPW, gh, app.Hooks{}, 2000)
	secrets := map[string]string{"database password": password, "cursor key": keyHex}
	for i, line := range strings.Split(string(githubtest.KeyPEM()), "\n") {
		if len(line) > 20 && !strings.HasPrefix(line, "-----") {
			secrets["App key line "+string(rune('a'+i%26))] = line
		}
	}
	// A second serve with the canary cursor key, and traffic through it.
	env := testEnv{}
	for k, v := range s.env {
		env[k] = v
	}
	delete(env, "HEYAIRA_PUBLIC_URL")
	env["HEYAIRA_CURSOR_KEY_FILE"] = writeFile(t, "cursor.key", keyHex+"\n", 0o600)
	var logs logbuf.Buffer
	base, stop := startServe(t, env, fakeGitHub(gh), &logs)
	tok := secretsOf(t, keyHex).Mint(oauth.PrefixAccess, time.Now().Add(time.Hour))
	storetest.InsertAccessToken(t, s.dbURL, s.person, s.project, base+"/mcp", tok, []string{"documents:read"})
	c := newLoadClient(base)
	defer c.close()
	o := c.toolCall(tok, "git_document_get", map[string]any{"source_id": s.source, "max_bytes": 500})
	if !o.ok() {
		t.Fatalf("read: %+v", o)
	}
	secrets["access token"] = tok
	if cur := cursorIn(o.body); cur != "" {
		secrets["cursor"] = cur
	}
	stop()

	// Start-up failures: an unreachable database, a malformed URL.
	var failures strings.Builder
	for _, bad := range []string{
		"postgres://postgres:" + password + "@127.0.0.1:1/x?sslmode=disable&connect_timeout=1",
		"postgres://postgres:" + password + "@[::1/x",
	} {
		e := testEnv{}
		for k, v := range env {
			e[k] = v
		}
		e["HEYAIRA_DATABASE_URL"] = bad
		// serve waits for a database it cannot reach (docs/operating.md):
		// bounded here, so that it gives up and its failure is checked too,
		// wait lines included.
		e["HEYAIRA_DB_WAIT_SECONDS"] = "2"
		var stderr bytes.Buffer
		err := run(t.Context(), []string{"heyaira", "serve"}, e.get, nil, &bytes.Buffer{}, &stderr)
		if err == nil {
			t.Fatalf("serve started with %q", bad)
		}
		failures.WriteString(err.Error() + "\n" + stderr.String())
		var astdout, astderr bytes.Buffer
		aerr := run(t.Context(), []string{"heyaira-admin", "list-document-sources", "--project-id", s.project}, e.get, nil, &astdout, &astderr)
		if aerr == nil {
			t.Fatalf("admin worked with %q", bad)
		}
		failures.WriteString(aerr.Error() + "\n" + astdout.String() + astderr.String())
	}
	// The admin CLI: a legacy token is printed once, on stdout only.
	var stdout, stderr bytes.Buffer
	if err := run(t.Context(), []string{"heyaira-admin", "issue-legacy-token", "--project-id", s.project, "--name", "ci"},
		s.env.get, nil, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	legacy := strings.TrimSpace(stdout.String()[strings.LastIndex(stdout.String(), " ")+1:])
	if strings.Count(stdout.String(), legacy) != 1 || len(legacy) < 40 {
		t.Errorf("issue-legacy-token stdout: %q", stdout.String())
	}
	secrets["legacy token"] = legacy

	all := logs.String() + s.logs.String() + failures.String() + stderr.String()
	if !strings.Contains(all, `"msg":"listening"`) {
		t.Fatal("no serve log captured: the scan proves nothing")
	}
	assertNoLeak(t, "serve and admin output", all, secrets)
	// LG-03: times are UTC.
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) != nil {
			t.Errorf("not a JSON log line: %.100q", line)
			continue
		}
		if ts, _ := m["time"].(string); !strings.HasSuffix(ts, "Z") {
			t.Errorf("log time %q is not UTC", ts)
		}
	}
}

// Row IN-09 (headers of the real server): serve's http.Server bounds
// headers at 32 KiB: a 40 KB header gets 431 before any handler.
func TestIN09HeaderBoundOfServe(t *testing.T) {
	t.Parallel()
	base, _ := startServe(t, baseEnv(t, storetest.NewMigratedURL(t)), app.Hooks{}, &logbuf.Buffer{})
	req, _ := http.NewRequest("POST", base+"/mcp", strings.NewReader(`{}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Big", strings.Repeat("a", 40<<10))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("40 KB header: %d, want 431", resp.StatusCode)
	}
}

// Row AZ-03(b), the CLI half (the schema half is TestSchemaChecks):
// issue-legacy-token has no flag that could add a scope.
func TestAZ03LegacyTokenHasNoScopeFlag(t *testing.T) {
	t.Parallel()
	for _, flag := range []string{"--scope", "--scopes"} {
		var stdout, stderr bytes.Buffer
		err := run(t.Context(), []string{"heyaira-admin", "issue-legacy-token", "--project-id", "00000000-0000-4000-8000-000000000000",
			"--name", "x", flag, "documents:read"}, func(string) string { return "" }, nil, &stdout, &stderr)
		if !errors.Is(err, admin.ErrUsage) {
			t.Errorf("issue-legacy-token %s: %v, want a usage error", flag, err)
		}
	}
	var help bytes.Buffer
	run(t.Context(), []string{"heyaira-admin", "issue-legacy-token", "--help"}, func(string) string { return "" }, nil, &help, &help)
	if strings.Contains(help.String(), "scope") && !strings.Contains(help.String(), "memory/task scopes only") {
		t.Errorf("issue-legacy-token --help mentions a scope option:\n%s", help.String())
	}
}

// Row DB-05 (the admin half; POST /oauth/revoke is
// TestDB05RevokeEndpointWhileLocked): revoke-token, revoke-grant and
// revoke-document-source while their table is locked fail with exit 1 and
// a one-line reason; the object stays active; no revocation is audited.
func TestDB05RevokeWhileLocked(t *testing.T) {
	t.Parallel()
	gh := githubtest.New(t)
	s := newLiveServer(t, storetest.NewURL(t), gh, app.Hooks{}, 100)
	db := sqlDB(t, s.dbURL)
	var tokenID, grantID string
	db.QueryRow(`SELECT id, grant_id FROM oauth_tokens WHERE token_hash = sha256(convert_to($1, 'UTF8'))`, s.access).Scan(&tokenID, &grantID)
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.Exec(`LOCK TABLE oauth_tokens, oauth_grants, document_sources IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	auditBefore := countRows(t, db, `audit_events`)
	var wg sync.WaitGroup
	for _, args := range [][]string{
		{"revoke-token", "--token-id", tokenID},
		{"revoke-grant", "--grant-id", grantID},
		{"revoke-document-source", "--source-id", s.source},
	} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var stdout, stderr bytes.Buffer
			err := run(t.Context(), append([]string{"heyaira-admin"}, args...), s.env.get, nil, &stdout, &stderr)
			if err == nil || errors.Is(err, admin.ErrUsage) {
				t.Errorf("%s while locked: %v, want a failure (exit 1)", args[0], err)
			}
			if msg := strings.TrimSpace(err.Error()); strings.Contains(msg, "\n") || msg == "" {
				t.Errorf("%s: reason %q is not one line", args[0], msg)
			}
		}()
	}
	wg.Wait()
	tx.Rollback()
	if n := countRows(t, db, `audit_events`) - auditBefore; n != 0 {
		t.Errorf("%d audit rows for revocations that failed", n)
	}
	c := newLoadClient(s.base)
	defer c.close()
	if o := c.toolCall(s.access, "git_document_get", map[string]any{"source_id": s.source}); !o.ok() {
		t.Errorf("after the failed revocations, token, grant and source: %s", o.code)
	}
}

// Row IN-01, the inputs the admin tests did not already name: a
// docs/agents look-alike component, a 41-character SHA and percent-encoded
// or trailing-slash paths are refused, and nothing is written. (The rest of
// the row is TestRefusedCommandsWriteNothing, TestValidatePath and
// FuzzValidatePath.)
func TestIN01MoreAdminRefusals(t *testing.T) {
	t.Parallel()
	env := baseEnv(t, storetest.NewMigratedURL(t))
	account := str(t, adminRun(t, env, "create-account", "--name", "A"), "id")
	project := str(t, adminRun(t, env, "create-project", "--account-id", account, "--name", "P"), "id")
	adminRun(t, env, "link-repository", "--project-id", project, "--github-owner", "h8v6",
		"--github-repository", "heyaira", "--github-installation-id", "7")
	db := sqlDB(t, env["HEYAIRA_DATABASE_URL"])
	before := countRows(t, db, "document_sources") + countRows(t, db, "account_sources")
	sha := strings.Repeat("a", 40)
	for _, args := range [][]string{
		{"add-account-source", "--account-id", account, "--github-owner", "h8v6", "--github-repository", "agents",
			"--github-installation-id", "7", "--layer", "core", "--path", "docs/agents-evil/x.md", "--track", "main"},
		{"add-account-source", "--account-id", account, "--github-owner", "h8v6", "--github-repository", "agents",
			"--github-installation-id", "7", "--layer", "core", "--path", "docs/agentsx/core.md", "--track", "main"},
		{"add-document-source", "--project-id", project, "--github-owner", "h8v6", "--github-repository", "heyaira",
			"--document-role", "runtime", "--path", "docs/a.md", "--commit-sha", sha + "a"},
		{"add-document-source", "--project-id", project, "--github-owner", "h8v6", "--github-repository", "heyaira",
			"--document-role", "runtime", "--path", "docs/a%20b.md", "--commit-sha", sha},
		{"add-document-source", "--project-id", project, "--github-owner", "h8v6", "--github-repository", "heyaira",
			"--document-role", "runtime", "--path", "docs/a.md/", "--commit-sha", sha},
		{"add-document-source", "--project-id", project, "--github-owner", "h8v6", "--github-repository", "heyaira",
			"--document-role", "instruction", "--path", "docs/a.md", "--track", "refs/tags/v1"},
	} {
		var stdout, stderr bytes.Buffer
		err := run(t.Context(), append([]string{"heyaira-admin"}, args...), env.get, nil, &stdout, &stderr)
		if err == nil {
			t.Errorf("%v was accepted", args)
			continue
		}
		if reason := strings.TrimSpace(stderr.String()); reason == "" || strings.Count(reason, "\n") > 0 && !errors.Is(err, admin.ErrUsage) {
			t.Errorf("%v: reason %q", args, reason)
		}
	}
	if after := countRows(t, db, "document_sources") + countRows(t, db, "account_sources"); after != before {
		t.Errorf("refused commands wrote %d rows", after-before)
	}
}

// Row BT-01 from outside: the real program, a source allowlisted by the real
// admin CLI, and JSON-RPC over HTTP as a client sends it. A token with the
// workflow scopes but not documents:read gets only 403 insufficient_scope
// from dispatch, correction and the full view; the compact view works.
func TestBT01WorkflowToolsFromOutside(t *testing.T) {
	t.Parallel()
	gh := githubtest.New(t)
	dbURL := storetest.NewURL(t)
	s := newLiveServer(t, dbURL, gh, app.Hooks{}, 100)
	const secret = "Outside instruction text 4321.\n"
	gh.AddFile("h8v6", "heyaira", liveCommit, "docs/agents/review.md", []byte(secret))
	adminRun(t, s.env, "add-document-source", "--project-id", s.project, "--github-owner", "h8v6",
		"--github-repository", "heyaira", "--document-role", "instruction", "--path", "docs/agents/review.md",
		"--commit-sha", liveCommit)
	token := func(scopes ...string) *mcpClient {
		tok := newToken(t, oauth.PrefixAccess, time.Hour)
		storetest.InsertAccessToken(t, dbURL, s.person, s.project, s.base+"/mcp", tok, scopes)
		return &mcpClient{t: t, url: s.base + "/mcp", token: tok}
	}
	all := token("tasks:write", "workflows:read", "workflows:write", "documents:read")
	task, _ := all.callTool("task_create", map[string]any{"title": "t"})
	wf, isErr := all.callTool("workflow_dispatch", map[string]any{"task_id": task["task_id"], "profile": "reviewer", "mode": "worker"})
	if isErr || !strings.Contains(fmt.Sprint(wf["instructions"]), "Outside instruction") {
		t.Fatalf("dispatch with documents:read: %v", wf)
	}
	id := wf["workflow_id"]
	noDocs := token("tasks:write", "workflows:read", "workflows:write")
	for name, call := range map[string][2]any{
		"dispatch":  {"workflow_dispatch", map[string]any{"task_id": task["task_id"], "profile": "reviewer", "mode": "worker"}},
		"correct":   {"workflow_correct", map[string]any{"workflow_id": id, "note": "n"}},
		"full view": {"workflow_get", map[string]any{"workflow_id": id, "view": "full"}},
	} {
		r := noDocs.post("tools/call", map[string]any{"name": call[0], "arguments": call[1]})
		if r.status != 403 || !strings.Contains(r.header.Get("WWW-Authenticate"), `error="insufficient_scope"`) ||
			!strings.Contains(r.header.Get("WWW-Authenticate"), "documents:read") || strings.Contains(fmt.Sprint(r.body), "Outside") {
			t.Errorf("%s without documents:read: HTTP %d %q %v", name, r.status, r.header.Get("WWW-Authenticate"), r.body)
		}
	}
	compact, isErr := noDocs.callTool("workflow_get", map[string]any{"workflow_id": id, "view": "compact"})
	if isErr || compact["view"] != "compact" || strings.Contains(fmt.Sprint(compact), "Outside") {
		t.Errorf("compact view: %v", compact)
	}
}
