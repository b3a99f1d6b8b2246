package server_test

// Logging rows of the attack matrix (docs/security-tests.md §2.8). LG-01 also
// runs over the whole server suite: every servertest.Env checks at cleanup that none
// of the tokens, cursors and content it handled reached its log
// (servertest/canary.go); internal/systemtest does the same for the secrets only serve
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
	"heyaira/server/internal/servertest"
	"heyaira/server/internal/web"
	"heyaira/server/mcp"
	"heyaira/server/metrics"
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
	secret := "hya_" + servertest.RandomB64() + "/+"
	for _, form := range []string{
		secret, base64.StdEncoding.EncodeToString([]byte(secret)), base64.RawURLEncoding.EncodeToString([]byte(secret)),
		url.QueryEscape(secret), url.PathEscape(secret), secret[10:22], `{"x":"` + secret[5:30] + `"}`,
	} {
		c := &servertest.CanarySet{}
		c.Secret("token", secret)
		if len(c.Find("log line: "+form+" end")) == 0 {
			t.Errorf("the scanner misses %q", form)
		}
	}
	c := &servertest.CanarySet{}
	c.Content("content", "line one\nline \"two\" é and more text beyond 32 bytes")
	if len(c.Find(`{"msg":"line one\nline \"two\" é and more text beyond 32 bytes"}`)) == 0 {
		t.Error("the scanner misses JSON-escaped content")
	}
	if found := c.Find("nothing here"); len(found) != 0 {
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
	e, _ := servertest.NewOAuth(t)
	tn := e.NewTenant("o", "r")
	canary := "CANARY-" + servertest.RandomB64()
	doc := []byte(strings.Repeat(canary+" é text\n", 40))
	e.GH.AddFile("o", "r", servertest.CommitA, "docs/a.md", doc)
	e.GH.AddFile("o", "r", servertest.CommitA, "docs/b.md", []byte("bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"))
	src := e.AddSource(tn, "runtime", "docs/a.md", servertest.CommitA, "", 300)
	srcB := e.AddSource(tn, "runtime", "docs/b.md", servertest.CommitA, "", 300)
	c := e.Register("http://127.0.0.1/cb")
	b := e.Browser(t)
	link := e.SigninLink(tn.Principal)
	b.Get("/oauth/authorize?" + c.AuthorizeQuery("").Encode())
	sp := b.Get("/signin?token=" + link)
	e.Canaries.Secret("sign-in CSRF field", servertest.Hidden(sp.Body).Get("csrf"))
	e.Canaries.Secret("sign-in CSRF cookie", servertest.ReadJarCookie(b, e, "heyaira_signin_csrf"))
	next := b.Post("/signin", servertest.Hidden(sp.Body)).Header.Get("Location")
	e.Canaries.Secret("session cookie", servertest.ReadJarCookie(b, e, "heyaira_session"))
	consent := b.Get(next)
	e.Canaries.Secret("request handle", servertest.Hidden(consent.Body).Get("request"))
	e.Canaries.Secret("consent CSRF", servertest.Hidden(consent.Body).Get("csrf"))
	code := servertest.CodeFrom(t, b.Approve(consent, tn.Project, "documents:read", "memory:read", "memory:write"))
	tk := e.Exchange(c, code)
	access, refresh := servertest.Str(tk.Body, "access_token"), servertest.Str(tk.Body, "refresh_token")

	// Documents: a whole read through cursors, a tampered cursor.
	args := map[string]any{"source_id": src}
	for {
		sc, isErr, raw := e.Call(access, "git_document_get", args)
		if isErr {
			t.Fatalf("read: %s", raw)
		}
		next, ok := sc["next_cursor"].(string)
		if !ok {
			break
		}
		args = map[string]any{"source_id": src, "cursor": next}
	}
	e.Call(access, "git_document_get", map[string]any{"source_id": src, "cursor": "x" + args["cursor"].(string)})
	e.Call(access, "memory_put", map[string]any{"key": "k", "content": canary + " memory content"})
	e.Canaries.Content("memory content", canary+" memory content")
	// GitHub error bodies carrying the canary, on contents and on a mint.
	e.GH.InjectN(githubtest.RouteContents, 1, githubtest.Status(500, `{"message":"`+canary+`-500 body"}`))
	e.Call(access, "git_document_get", map[string]any{"source_id": src})
	e.GH.InjectN(githubtest.RouteContents, 1, githubtest.Status(404, `{"message":"`+canary+`-404 body"}`))
	e.Call(access, "git_document_get", map[string]any{"source_id": srcB})
	e.GH.RevokeTokens() // a 401 on the cached token: drop, re-mint, retry
	e.Call(access, "git_document_get", map[string]any{"source_id": srcB})

	e.Canaries.Secret("GitHub error body", canary+"-500 body")
	e.Canaries.Secret("download_url token", e.GH.DownloadURLToken())
	for _, tok := range e.GH.IssuedTokens() {
		e.Canaries.Secret("installation token", tok)
	}
	for _, jwt := range e.GH.SeenJWTs() {
		e.Canaries.Secret("App JWT", jwt)
	}
	if len(e.GH.IssuedTokens()) < 2 || len(e.GH.SeenJWTs()) < 2 {
		t.Fatalf("the flow minted %d tokens with %d JWTs; the scan would prove little", len(e.GH.IssuedTokens()), len(e.GH.SeenJWTs()))
	}
	for _, line := range strings.Split(string(githubtest.KeyPEM()), "\n") {
		if !strings.HasPrefix(line, "-----") {
			e.Canaries.Secret("App key PEM", line)
		}
	}
	e.Refresh(c, refresh)
	e.Refresh(c, refresh) // reuse: audited
	e.Exchange(c, code)   // replay: refused, and revokes the first tokens
	var audit strings.Builder
	rows, err := e.DB.SQL().Query(`SELECT row_to_json(a)::text FROM audit_events a`)
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
	for _, leak := range e.Canaries.Find(audit.String()) {
		t.Errorf("audit_events holds %s", leak)
	}
	// The log is scanned by servertest.New's cleanup; check here too, to fail
	// with this test's name.
	for _, leak := range e.Canaries.Find(e.Logs.String()) {
		t.Errorf("the log holds %s", leak)
	}
}

// Row LG-02: log injection. client_name, state, User-Agent, a JSON-RPC
// method, a source_id and a memory key carry a forged JSON line, CR, an
// ANSI escape and 10 KB. The log stays one JSON object per line, no line
// is forged, and every value is escaped and cut at web.MaxLogValue (256) bytes.
func TestLG02LogInjection(t *testing.T) {
	t.Parallel()
	e := servertest.New(t)
	tn := e.NewTenant("o", "r")
	tok := e.Token(tn, "documents:read", "memory:read")
	forged := "\n{\"level\":\"INFO\",\"msg\":\"forged\"}\r\x1b[31m" + strings.Repeat("A", 10<<10)
	e.PostJSON("/oauth/register", map[string]any{"redirect_uris": []string{"http://127.0.0.1/cb"}, "client_name": forged})
	q := url.Values{"response_type": {"code"}, "client_id": {forged}, "redirect_uri": {"http://127.0.0.1/cb"}, "state": {forged}}
	req, _ := http.NewRequest("GET", e.Srv.URL+"/oauth/authorize?"+q.Encode(), nil)
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
	e.Post(`{"jsonrpc":"2.0","id":1,"method":`+string(m)+`}`, "Authorization", "Bearer "+tok)
	e.Call(tok, "git_document_get", map[string]any{"source_id": forged})
	e.Call(tok, "memory_get", map[string]any{"key": forged})
	e.Post(`{"jsonrpc":"2.0","id":1,"method":"ping"}`, "Authorization", "Bearer "+tok)

	lines := logLines(t, e.Logs.String())
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
	for _, line := range strings.Split(e.Logs.String(), "\n") {
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
	e, _ := servertest.NewOAuth(t)
	tn := e.NewTenant("o", "r")
	other := e.NewTenant("o", "x")
	e.GH.AddFile("o", "r", servertest.CommitA, "a.md", servertest.MixedText(3000))
	src := e.AddSource(tn, "runtime", "a.md", servertest.CommitA, "", 1000)
	foreign := e.AddSource(other, "runtime", "a.md", servertest.CommitA, "", 1000)
	docs := e.Token(tn, "documents:read")
	memOnly := e.Token(tn, "memory:read")
	sc, _, _ := e.Call(docs, "git_document_get", map[string]any{"source_id": src})
	cur := sc["next_cursor"].(string)
	c := e.Register("http://127.0.0.1/cb")
	rt := servertest.Str(e.Tokens(t, tn, c, "memory:read").Body, "refresh_token")
	e.Refresh(c, rt)

	callTool := func(tok, tool string, args map[string]any) servertest.Reply {
		return e.RPC(tok, "tools/call", map[string]any{"name": tool, "arguments": args})
	}
	b := e.Browser(t)
	b.SignIn(tn.Principal)
	consent := b.Consent(c.AuthorizeQuery("memory:read"))
	deny := servertest.Hidden(consent.Body)
	deny.Set("decision", "deny")
	events := []struct {
		name  string
		do    func() http.Header
		want  map[string]any // fields the line must hold (nil value: present, any value)
		audit string         // audit action expected for this request, if any
	}{
		{"401 without a token", func() http.Header { return e.Post(`{"jsonrpc":"2.0","id":1,"method":"ping"}`).Header },
			map[string]any{"route": "POST /mcp", "status": 401.0}, ""},
		{"403 insufficient_scope", func() http.Header {
			return callTool(memOnly, "git_document_get", map[string]any{"source_id": src}).Header
		},
			map[string]any{"status": 403.0, "tool": "git_document_get", "code": "insufficient_scope", "project": tn.Project, "principal": nil}, ""},
		{"AZ-05 another project's source", func() http.Header {
			return callTool(docs, "git_document_get", map[string]any{"source_id": foreign}).Header
		},
			map[string]any{"tool": "git_document_get", "code": "source_not_found", "source": foreign, "project": tn.Project}, ""},
		{"CU-01 tampered cursor", func() http.Header {
			flipped := map[bool]string{true: "B", false: "A"}[cur[0] == 'A'] + cur[1:]
			return callTool(docs, "git_document_get", map[string]any{"source_id": src, "cursor": flipped}).Header
		}, map[string]any{"code": "cursor_invalid", "source": src}, ""},
		{"document read", func() http.Header { return callTool(docs, "git_document_get", map[string]any{"source_id": src}).Header },
			map[string]any{"tool": "git_document_get", "code": "ok", "source": src, "project": tn.Project, "principal": nil}, "document.read"},
		{"OA-10 refresh reuse", func() http.Header { return e.Refresh(c, rt).Header },
			map[string]any{"route": "POST /oauth/token", "status": 400.0, "code": "invalid_grant", "reason": nil, "client_id": e.ClientRow(c)}, "oauth_refresh.reuse"},
		{"PKCE failure", func() http.Header {
			code := e.Flow(t, tn, c, "memory:read", "memory:read")
			return e.Exchange(c, code, "code_verifier", servertest.OAuthB64([]byte(strings.Repeat("w", 40)))).Header
		}, map[string]any{"status": 400.0, "code": "invalid_grant"}, ""},
		{"redirect mismatch", func() http.Header {
			q := c.AuthorizeQuery("")
			q.Set("redirect_uri", "https://evil.example/cb")
			return b.Get("/oauth/authorize?" + q.Encode()).Header
		}, map[string]any{"route": "GET /oauth/authorize", "status": 400.0, "code": "invalid_client_or_redirect"}, ""},
		{"DCR", func() http.Header {
			return e.PostJSON("/oauth/register", map[string]any{"redirect_uris": []string{"http://127.0.0.1/x"}}).Header
		}, map[string]any{"route": "POST /oauth/register", "status": 201.0, "code": "ok", "client_id": nil}, ""},
		{"consent denied", func() http.Header { return b.Post("/oauth/authorize", deny).Header },
			map[string]any{"route": "POST /oauth/authorize", "code": "access_denied", "client_id": e.ClientRow(c)}, ""},
	}
	for _, ev := range events {
		auditBefore := e.CountRows("audit_events")
		h := ev.do()
		id := h.Get("X-Request-Id")
		got := linesFor(logLines(t, e.Logs.String()), id)
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
			if e.CountRows(`audit_events WHERE action = '`+ev.audit+`'`) == 0 || e.CountRows("audit_events") <= auditBefore {
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
	secret := "PANIC-SECRET-" + servertest.RandomB64()
	logs := &logbuf.Buffer{}
	logger := slog.New(slog.NewJSONHandler(logs, nil))
	secrets := servertest.HandlerSecrets()
	counters := metrics.New()
	bearer := "Bearer " + secrets.Mint(oauth.PrefixAccess, time.Time{})
	values := map[string]any{"string": "boom " + secret, "error": errors.New("boom " + secret), "other": struct{ S string }{secret}}
	type boomArgs struct {
		Kind string `json:"kind" arg:"text"`
	}
	boom := &mcp.Tool{Name: "boom", Scope: "memory:read", ToolArgs: mcp.Typed(func(ctx context.Context, p mcp.Principal, a *boomArgs) (any, error) {
		panic(values[a.Kind])
	})}
	tools := mcp.NewToolTable(logger, web.NewRateLimiter(1000, 1000), counters, time.Now, []*mcp.Tool{boom})
	authn := func(context.Context, []byte) (store.Auth, error) {
		return store.Auth{Kind: "oauth", PrincipalID: "p", ProjectID: "proj", Resource: "http://127.0.0.1/mcp", Scopes: []string{"memory:read"}}, nil
	}
	// The middleware chain of NewServer around a handler that panics.
	var h http.Handler = mcp.HandleMCP(logger, tools, servertest.MCPConfig(secrets), authn)
	h = web.WithRequestID(web.WithRecover(logger, web.WithAccessLog(logger, counters, web.WithSecurityHeaders(h))))
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
	var counted strings.Builder
	counters.WriteText(&counted)
	if want := fmt.Sprintf(`heyaira_http_requests_total{route="other",status="500"} %d`, len(values)); !strings.Contains(counted.String(), want) {
		t.Errorf("the panics were not counted: want %s in\n%s", want, counted.String())
	}

	// An SQL failure inside a tool, and a GitHub 500 with a body.
	e := servertest.New(t)
	tn := e.NewTenant("o", "r")
	e.GH.AddFile("o", "r", servertest.CommitA, "a.md", []byte("hello"))
	src := e.AddSource(tn, "runtime", "a.md", servertest.CommitA, "", 1000)
	tok := e.Token(tn, "memory:write", "documents:read")
	e.Exec(`CREATE FUNCTION fault_fail() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN RAISE EXCEPTION 'injected failure in table memories'; END $$`)
	e.Exec(`CREATE TRIGGER fault BEFORE INSERT OR UPDATE ON memories FOR EACH ROW EXECUTE FUNCTION fault_fail()`)
	r := e.RPC(tok, "tools/call", map[string]any{"name": "memory_put", "arguments": map[string]any{"key": "k", "content": "v"}})
	id := r.Header.Get("X-Request-Id")
	if servertest.RPCOutcome(r) != "internal" || !strings.Contains(string(r.Raw), id) {
		t.Errorf("SQL failure: %s, want internal with request id %s", r.Raw, id)
	}
	for _, leak := range []string{"injected", "memories", "pq:", "P0001"} {
		if strings.Contains(string(r.Raw), leak) {
			t.Errorf("SQL failure: the answer holds %q: %s", leak, r.Raw)
		}
	}
	if n := len(linesFor(logLines(t, e.Logs.String()), id)); n != 2 {
		t.Errorf("SQL failure: %d log lines, want the error and the access line", n)
	}
	e.GH.InjectN(githubtest.RouteContents, 1, githubtest.Status(500, `{"message":"`+secret+` from GitHub"}`))
	r = e.RPC(tok, "tools/call", map[string]any{"name": "git_document_get", "arguments": map[string]any{"source_id": src}})
	if servertest.RPCOutcome(r) != "provider_unavailable" || strings.Contains(string(r.Raw), secret) || strings.Contains(e.Logs.String(), secret) {
		t.Errorf("GitHub 500 with a body: %s", r.Raw)
	}
}
