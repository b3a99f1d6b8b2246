package server

// Logging rows of the attack matrix (docs/security-tests.md §2.8). LG-01 also
// runs over the whole server suite: every testEnv checks at cleanup that none
// of the tokens, cursors and content it handled reached its log
// (canary_test.go); internal/systemtest does the same for the secrets only serve
// sees (database password, cursor key, App key).

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"heyaira/github/githubtest"
	"heyaira/internal/logbuf"
	"heyaira/oauth"
	"heyaira/server/internal/web"
	"heyaira/server/mcp"
	"heyaira/store"
)

// logLines parses a JSON log, one object per line; a line that is not a
// JSON object is a test failure (a forged or broken line).
func logLines(t *testing.T, logs string) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(logs))
	sc.Buffer(make([]byte, 4<<20), 4<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Errorf("a log line is not one JSON object: %.200q", sc.Text())
			continue
		}
		out = append(out, m)
	}
	return out
}

// linesFor returns the log lines of one request.
func linesFor(lines []map[string]any, reqID string) []map[string]any {
	var out []map[string]any
	for _, l := range lines {
		if l["req_id"] == reqID {
			out = append(out, l)
		}
	}
	return out
}

// Row LG-01: the scanner finds a secret in every spelling a log could
// carry, so a clean scan means something.
func TestLG01CanaryScannerFindsEveryForm(t *testing.T) {
	t.Parallel()
	secret := "hya_" + randomB64() + "/+"
	for _, form := range []string{
		secret, base64.StdEncoding.EncodeToString([]byte(secret)), base64.RawURLEncoding.EncodeToString([]byte(secret)),
		url.QueryEscape(secret), url.PathEscape(secret), secret[10:22], `{"x":"` + secret[5:30] + `"}`,
	} {
		c := &canarySet{}
		c.secret("token", secret)
		if len(c.find("log line: "+form+" end")) == 0 {
			t.Errorf("the scanner misses %q", form)
		}
	}
	c := &canarySet{}
	c.content("content", "line one\nline \"two\" é and more text beyond 32 bytes")
	if len(c.find(`{"msg":"line one\nline \"two\" é and more text beyond 32 bytes"}`)) == 0 {
		t.Error("the scanner misses JSON-escaped content")
	}
	if found := c.find("nothing here"); len(found) != 0 {
		t.Errorf("false positive: %v", found)
	}
}

// Row LG-01 at the server: the whole OAuth flow, document reads with
// continuations, GitHub success and error bodies, installation tokens,
// App JWTs and the App key, with every secret and the content planted as
// canaries. None appears in the log or in any row of audit_events (the
// database as a whole is TestCR02SecretsStoredOnlyHashed).
func TestLG01EveryPositionStaysOutOfLogs(t *testing.T) {
	t.Parallel()
	e, _ := newOAuthEnv(t)
	tn := e.newTenant("o", "r")
	canary := "CANARY-" + randomB64()
	doc := []byte(strings.Repeat(canary+" é text\n", 40))
	e.gh.AddFile("o", "r", commitA, "docs/a.md", doc)
	e.gh.AddFile("o", "r", commitA, "docs/b.md", []byte("bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"))
	src := e.addSource(tn, "runtime", "docs/a.md", commitA, "", 300)
	srcB := e.addSource(tn, "runtime", "docs/b.md", commitA, "", 300)
	c := e.register("http://127.0.0.1/cb")
	b := e.browser(t)
	link := e.signinLink(tn.principal)
	b.get("/oauth/authorize?" + c.authorizeQuery("").Encode())
	sp := b.get("/signin?token=" + link)
	e.canaries.secret("sign-in CSRF field", hidden(sp.body).Get("csrf"))
	e.canaries.secret("sign-in CSRF cookie", readJarCookie(b, e, "heyaira_signin_csrf"))
	next := b.post("/signin", hidden(sp.body)).header.Get("Location")
	e.canaries.secret("session cookie", readJarCookie(b, e, "heyaira_session"))
	consent := b.get(next)
	e.canaries.secret("request handle", hidden(consent.body).Get("request"))
	e.canaries.secret("consent CSRF", hidden(consent.body).Get("csrf"))
	code := codeFrom(t, b.approve(consent, tn.project, "documents:read", "memory:read", "memory:write"))
	tk := e.exchange(c, code)
	access, refresh := str(tk.body, "access_token"), str(tk.body, "refresh_token")

	// Documents: a whole read through cursors, a tampered cursor.
	args := map[string]any{"source_id": src}
	for {
		sc, isErr, raw := e.call(access, "git_document_get", args)
		if isErr {
			t.Fatalf("read: %s", raw)
		}
		next, ok := sc["next_cursor"].(string)
		if !ok {
			break
		}
		args = map[string]any{"source_id": src, "cursor": next}
	}
	e.call(access, "git_document_get", map[string]any{"source_id": src, "cursor": "x" + args["cursor"].(string)})
	e.call(access, "memory_put", map[string]any{"key": "k", "content": canary + " memory content"})
	e.canaries.content("memory content", canary+" memory content")
	// GitHub error bodies carrying the canary, on contents and on a mint.
	e.gh.InjectN(githubtest.RouteContents, 1, githubtest.Status(500, `{"message":"`+canary+`-500 body"}`))
	e.call(access, "git_document_get", map[string]any{"source_id": src})
	e.gh.InjectN(githubtest.RouteContents, 1, githubtest.Status(404, `{"message":"`+canary+`-404 body"}`))
	e.call(access, "git_document_get", map[string]any{"source_id": srcB})
	e.gh.RevokeTokens() // a 401 on the cached token: drop, re-mint, retry
	e.call(access, "git_document_get", map[string]any{"source_id": srcB})

	e.canaries.secret("GitHub error body", canary+"-500 body")
	e.canaries.secret("download_url token", e.gh.DownloadURLToken())
	for _, tok := range e.gh.IssuedTokens() {
		e.canaries.secret("installation token", tok)
	}
	for _, jwt := range e.gh.SeenJWTs() {
		e.canaries.secret("App JWT", jwt)
	}
	if len(e.gh.IssuedTokens()) < 2 || len(e.gh.SeenJWTs()) < 2 {
		t.Fatalf("the flow minted %d tokens with %d JWTs; the scan would prove little", len(e.gh.IssuedTokens()), len(e.gh.SeenJWTs()))
	}
	for _, line := range strings.Split(string(githubtest.KeyPEM()), "\n") {
		if !strings.HasPrefix(line, "-----") {
			e.canaries.secret("App key PEM", line)
		}
	}
	e.refresh(c, refresh)
	e.refresh(c, refresh) // reuse: audited
	e.exchange(c, code)   // replay: refused, and revokes the first tokens
	var audit strings.Builder
	rows, err := e.db.SQL().Query(`SELECT row_to_json(a)::text FROM audit_events a`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var s string
		rows.Scan(&s)
		audit.WriteString(s + "\n")
	}
	rows.Close()
	if !strings.Contains(audit.String(), "document.read") {
		t.Fatal("no document read was audited: the audit dump proves nothing")
	}
	for _, leak := range e.canaries.find(audit.String()) {
		t.Errorf("audit_events holds %s", leak)
	}
	// The log is scanned by newTestEnv's cleanup; check here too, to fail
	// with this test's name.
	for _, leak := range e.canaries.find(e.logs.String()) {
		t.Errorf("the log holds %s", leak)
	}
}

// Row LG-02: log injection. client_name, state, User-Agent, a JSON-RPC
// method, a source_id and a memory key carry a forged JSON line, CR, an
// ANSI escape and 10 KB. The log stays one JSON object per line, no line
// is forged, and every value is escaped and cut at web.MaxLogValue (256) bytes.
func TestLG02LogInjection(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	tn := e.newTenant("o", "r")
	tok := e.token(tn, "documents:read", "memory:read")
	forged := "\n{\"level\":\"INFO\",\"msg\":\"forged\"}\r\x1b[31m" + strings.Repeat("A", 10<<10)
	e.postJSON("/oauth/register", map[string]any{"redirect_uris": []string{"http://127.0.0.1/cb"}, "client_name": forged})
	q := url.Values{"response_type": {"code"}, "client_id": {forged}, "redirect_uri": {"http://127.0.0.1/cb"}, "state": {forged}}
	req, _ := http.NewRequest("GET", e.srv.URL+"/oauth/authorize?"+q.Encode(), nil)
	// Go's client refuses control characters in a header; the rest goes.
	req.Header.Set("User-Agent", strings.Map(func(r rune) rune {
		if r < 0x20 {
			return ' '
		}
		return r
	}, forged))
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
	}
	m, _ := json.Marshal(forged)
	e.post(`{"jsonrpc":"2.0","id":1,"method":`+string(m)+`}`, "Authorization", "Bearer "+tok)
	e.call(tok, "git_document_get", map[string]any{"source_id": forged})
	e.call(tok, "memory_get", map[string]any{"key": forged})
	e.post(`{"jsonrpc":"2.0","id":1,"method":"ping"}`, "Authorization", "Bearer "+tok)

	lines := logLines(t, e.logs.String())
	if len(lines) < 6 {
		t.Fatalf("%d log lines", len(lines))
	}
	for _, l := range lines {
		if l["msg"] == "forged" {
			t.Error("a forged log line was written")
		}
		for k, v := range l {
			if s, ok := v.(string); ok && len(s) > web.MaxLogValue+len("…(truncated)") {
				t.Errorf("log value %q is %d bytes, over the %d-byte bound", k, len(s), web.MaxLogValue)
			}
		}
	}
	for _, line := range strings.Split(e.logs.String(), "\n") {
		if strings.ContainsAny(line, "\r\x1b") {
			t.Errorf("a raw control character reached the log: %.100q", line)
		}
	}
}

// Row LG-03: every security event is exactly one log line, with the
// request id the client saw, the route, status, duration and time, and the
// tool, project, principal, source and outcome code where they apply;
// document reads also write an audit row.
func TestLG03OneEventPerAction(t *testing.T) {
	t.Parallel()
	e, _ := newOAuthEnv(t)
	tn := e.newTenant("o", "r")
	other := e.newTenant("o", "x")
	e.gh.AddFile("o", "r", commitA, "a.md", mixedText(3000))
	src := e.addSource(tn, "runtime", "a.md", commitA, "", 1000)
	foreign := e.addSource(other, "runtime", "a.md", commitA, "", 1000)
	docs := e.token(tn, "documents:read")
	memOnly := e.token(tn, "memory:read")
	sc, _, _ := e.call(docs, "git_document_get", map[string]any{"source_id": src})
	cur := sc["next_cursor"].(string)
	c := e.register("http://127.0.0.1/cb")
	rt := str(e.tokens(t, tn, c, "memory:read").body, "refresh_token")
	e.refresh(c, rt)

	callTool := func(tok, tool string, args map[string]any) reply {
		return e.rpc(tok, "tools/call", map[string]any{"name": tool, "arguments": args})
	}
	b := e.browser(t)
	b.signIn(tn.principal)
	consent := b.consent(c.authorizeQuery("memory:read"))
	deny := hidden(consent.body)
	deny.Set("decision", "deny")
	events := []struct {
		name  string
		do    func() http.Header
		want  map[string]any // fields the line must hold (nil value: present, any value)
		audit string         // audit action expected for this request, if any
	}{
		{"401 without a token", func() http.Header { return e.post(`{"jsonrpc":"2.0","id":1,"method":"ping"}`).header },
			map[string]any{"route": "POST /mcp", "status": 401.0}, ""},
		{"403 insufficient_scope", func() http.Header {
			return callTool(memOnly, "git_document_get", map[string]any{"source_id": src}).header
		},
			map[string]any{"status": 403.0, "tool": "git_document_get", "code": "insufficient_scope", "project": tn.project, "principal": nil}, ""},
		{"AZ-05 another project's source", func() http.Header {
			return callTool(docs, "git_document_get", map[string]any{"source_id": foreign}).header
		},
			map[string]any{"tool": "git_document_get", "code": "source_not_found", "source": foreign, "project": tn.project}, ""},
		{"CU-01 tampered cursor", func() http.Header {
			flipped := map[bool]string{true: "B", false: "A"}[cur[0] == 'A'] + cur[1:]
			return callTool(docs, "git_document_get", map[string]any{"source_id": src, "cursor": flipped}).header
		}, map[string]any{"code": "cursor_invalid", "source": src}, ""},
		{"document read", func() http.Header { return callTool(docs, "git_document_get", map[string]any{"source_id": src}).header },
			map[string]any{"tool": "git_document_get", "code": "ok", "source": src, "project": tn.project, "principal": nil}, "document.read"},
		{"OA-10 refresh reuse", func() http.Header { return e.refresh(c, rt).header },
			map[string]any{"route": "POST /oauth/token", "status": 400.0, "code": "invalid_grant", "reason": nil, "client_id": e.clientRow(c)}, "oauth_refresh.reuse"},
		{"PKCE failure", func() http.Header {
			code := e.flow(t, tn, c, "memory:read", "memory:read")
			return e.exchange(c, code, "code_verifier", oauthB64([]byte(strings.Repeat("w", 40)))).header
		}, map[string]any{"status": 400.0, "code": "invalid_grant"}, ""},
		{"redirect mismatch", func() http.Header {
			q := c.authorizeQuery("")
			q.Set("redirect_uri", "https://evil.example/cb")
			return b.get("/oauth/authorize?" + q.Encode()).header
		}, map[string]any{"route": "GET /oauth/authorize", "status": 400.0, "code": "invalid_client_or_redirect"}, ""},
		{"DCR", func() http.Header {
			return e.postJSON("/oauth/register", map[string]any{"redirect_uris": []string{"http://127.0.0.1/x"}}).header
		}, map[string]any{"route": "POST /oauth/register", "status": 201.0, "code": "ok", "client_id": nil}, ""},
		{"consent denied", func() http.Header { return b.post("/oauth/authorize", deny).header },
			map[string]any{"route": "POST /oauth/authorize", "code": "access_denied", "client_id": e.clientRow(c)}, ""},
	}
	for _, ev := range events {
		auditBefore := e.countRows("audit_events")
		h := ev.do()
		id := h.Get("X-Request-Id")
		got := linesFor(logLines(t, e.logs.String()), id)
		if id == "" || len(got) != 1 {
			t.Errorf("%s: %d log lines for request %q, want exactly 1: %v", ev.name, len(got), id, got)
			continue
		}
		l := got[0]
		for _, k := range []string{"time", "req_id", "route", "status", "duration"} {
			if l[k] == nil {
				t.Errorf("%s: the line lacks %q: %v", ev.name, k, l)
			}
		}
		if ts, _ := l["time"].(string); ts != "" {
			if _, err := time.Parse(time.RFC3339Nano, ts); err != nil {
				t.Errorf("%s: time %q is not RFC 3339", ev.name, ts)
			}
		}
		for k, v := range ev.want {
			if l[k] == nil || (v != nil && l[k] != v) {
				t.Errorf("%s: %s = %v, want %v", ev.name, k, l[k], v)
			}
		}
		if ev.audit != "" {
			if e.countRows(`audit_events WHERE action = '`+ev.audit+`'`) == 0 || e.countRows("audit_events") <= auditBefore {
				t.Errorf("%s: no %s audit row", ev.name, ev.audit)
			}
		}
	}
}

// Row LG-04: a panic in a tool handler becomes a 500 that names the request
// id, one log line (the panic's type, never its value), and the next
// request is served; an SQL failure is the tool error internal with the
// request id and no SQL; a GitHub 500 with a body is provider_unavailable
// with no GitHub text.
// Row PF-06 (docs/security-tests.md).
func TestLG04PanicsAndInternalErrors(t *testing.T) {
	t.Parallel()
	secret := "PANIC-SECRET-" + randomB64()
	logs := &logbuf.Buffer{}
	logger := slog.New(slog.NewJSONHandler(logs, nil))
	cfg := Config{PublicURL: "http://127.0.0.1"}
	cfg.setDefaults()
	cfg.secrets = testSecrets()
	bearer := "Bearer " + cfg.secrets.Mint(oauth.PrefixAccess, time.Time{})
	values := map[string]any{"string": "boom " + secret, "error": errors.New("boom " + secret), "other": struct{ S string }{secret}}
	type boomArgs struct {
		Kind string `json:"kind" arg:"text"`
	}
	boom := &mcp.Tool{Name: "boom", Scope: "memory:read", ToolArgs: mcp.Typed(func(ctx context.Context, p mcp.Principal, a *boomArgs) (any, error) {
		panic(values[a.Kind])
	})}
	tools := mcp.NewToolTable(logger, web.NewRateLimiter(1000, 1000), cfg.Metrics, cfg.Now, []*mcp.Tool{boom})
	authn := func(context.Context, []byte) (store.Auth, error) {
		return store.Auth{Kind: "oauth", PrincipalID: "p", ProjectID: "proj", Resource: cfg.resource(), Scopes: []string{"memory:read"}}, nil
	}
	// The middleware chain of NewServer around a handler that panics.
	var h http.Handler = mcp.HandleMCP(logger, tools, cfg.mcpConfig(), authn)
	h = web.WithRequestID(web.WithRecover(logger, web.WithAccessLog(logger, cfg.Metrics, web.WithSecurityHeaders(h))))
	srv := httptest.NewServer(h)
	defer srv.Close()
	post := func(body string) (*http.Response, error) {
		req, _ := http.NewRequest("POST", srv.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", bearer)
		return http.DefaultClient.Do(req)
	}
	for kind := range values {
		before := len(logLines(t, logs.String()))
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"boom","arguments":{"kind":%q}}}`, kind)
		resp, err := post(body)
		if err != nil {
			t.Fatalf("%s panic: the connection failed: %v", kind, err)
		}
		var text strings.Builder
		bufio.NewReader(resp.Body).WriteTo(&text)
		resp.Body.Close()
		id := resp.Header.Get("X-Request-Id")
		if resp.StatusCode != 500 || id == "" || !strings.Contains(text.String(), id) || strings.Contains(text.String(), secret) {
			t.Errorf("%s panic: %d %q (request id %q)", kind, resp.StatusCode, text.String(), id)
		}
		// The access-log line with its 500 (the request is counted), then the
		// panic line.
		lines := logLines(t, logs.String())[before:]
		if len(lines) != 2 || lines[0]["msg"] != "request" || lines[0]["req_id"] != id || lines[0]["status"] != 500.0 ||
			lines[1]["msg"] != "panic" || lines[1]["req_id"] != id || lines[1]["type"] != kind {
			t.Errorf("%s panic: log lines %v, want the request line with 500, then one panic line with the request id and type", kind, lines)
		}
		// The server goes on serving.
		resp, err = post(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("after a panic: %v %v", err, resp)
		}
		resp.Body.Close()
	}
	if strings.Contains(logs.String(), secret[6:]) {
		t.Error("the panic value reached the log")
	}
	var metrics strings.Builder
	cfg.Metrics.WriteText(&metrics)
	if want := fmt.Sprintf(`heyaira_http_requests_total{route="other",status="500"} %d`, len(values)); !strings.Contains(metrics.String(), want) {
		t.Errorf("the panics were not counted: want %s in\n%s", want, metrics.String())
	}

	// An SQL failure inside a tool, and a GitHub 500 with a body.
	e := newTestEnv(t)
	tn := e.newTenant("o", "r")
	e.gh.AddFile("o", "r", commitA, "a.md", []byte("hello"))
	src := e.addSource(tn, "runtime", "a.md", commitA, "", 1000)
	tok := e.token(tn, "memory:write", "documents:read")
	e.exec(`CREATE FUNCTION fault_fail() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN RAISE EXCEPTION 'injected failure in table memories'; END $$`)
	e.exec(`CREATE TRIGGER fault BEFORE INSERT OR UPDATE ON memories FOR EACH ROW EXECUTE FUNCTION fault_fail()`)
	r := e.rpc(tok, "tools/call", map[string]any{"name": "memory_put", "arguments": map[string]any{"key": "k", "content": "v"}})
	id := r.header.Get("X-Request-Id")
	if rpcOutcome(r) != "internal" || !strings.Contains(string(r.raw), id) {
		t.Errorf("SQL failure: %s, want internal with request id %s", r.raw, id)
	}
	for _, leak := range []string{"injected", "memories", "pq:", "P0001"} {
		if strings.Contains(string(r.raw), leak) {
			t.Errorf("SQL failure: the answer holds %q: %s", leak, r.raw)
		}
	}
	if n := len(linesFor(logLines(t, e.logs.String()), id)); n != 2 {
		t.Errorf("SQL failure: %d log lines, want the error and the access line", n)
	}
	e.gh.InjectN(githubtest.RouteContents, 1, githubtest.Status(500, `{"message":"`+secret+` from GitHub"}`))
	r = e.rpc(tok, "tools/call", map[string]any{"name": "git_document_get", "arguments": map[string]any{"source_id": src}})
	if rpcOutcome(r) != "provider_unavailable" || strings.Contains(string(r.raw), secret) || strings.Contains(e.logs.String(), secret) {
		t.Errorf("GitHub 500 with a body: %s", r.raw)
	}
}
