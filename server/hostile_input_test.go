package server_test

// Input-validation rows of the attack matrix (docs/security-tests.md §2.4) at
// the server: stored paths re-validated, byte ranges over 4-byte characters,
// hostile JSON-RPC envelopes and HTTP framing, and hostile tool arguments.

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"heyaira/github/githubtest"
	"heyaira/internal/soak"
	"heyaira/server/internal/servertest"
)

// Row IN-02: defence in depth. Rows written straight into document_sources
// (bypassing the CLI) with traversal, dot segments, a backslash or a
// 2,000-byte path are refused with path_invalid before any GitHub request,
// and the refusal is audited with that outcome.
func TestIN02StoredPathsRevalidated(t *testing.T) {
	t.Parallel()
	e := servertest.New(t)
	tn := e.NewTenant("o", "r")
	tok := e.Token(tn, "documents:read")
	// The schema bounds paths to 1,024 bytes; drop that check in this test's
	// own database to plant a longer one.
	e.Exec(`ALTER TABLE document_sources DROP CONSTRAINT document_sources_path_check`)
	for _, p := range []string{"../x", "a/./b", `a\b`, "docs/../../etc/passwd", "/etc/passwd", strings.Repeat("a", 2000)} {
		src := e.AddSource(tn, "runtime", p, servertest.CommitA, "", 65536)
		e.WantCode(tok, "git_document_get", map[string]any{"source_id": src}, "path_invalid")
		if n := e.CountRows(`audit_events WHERE action = 'document.read' AND outcome = 'path_invalid' AND target = '` + src + `'`); n != 1 {
			t.Errorf("path %.20q: %d audit rows with outcome path_invalid", p, n)
		}
	}
	if n := e.GH.Count(githubtest.RouteContents) + e.GH.Count(githubtest.RouteMint); n != 0 {
		t.Errorf("%d GitHub requests for invalid stored paths", n)
	}
}

// Row IN-07: byte ranges over a 200 KB file of 4-byte characters.
func TestIN07RangesOverFourByteCharacters(t *testing.T) {
	t.Parallel()
	e := servertest.New(t)
	tn := e.NewTenant("o", "r")
	doc := []byte(strings.Repeat("😀", 50_000)) // 200,000 bytes
	e.GH.AddFile("o", "r", servertest.CommitA, "emoji.md", doc)
	src := e.AddSource(tn, "runtime", "emoji.md", servertest.CommitA, "", 65536)
	one := e.AddSource(tn, "runtime", "emoji.md", servertest.CommitA, "", 1)
	tok := e.Token(tn, "documents:read")
	get := func(args map[string]any) (map[string]any, bool, string) {
		args["source_id"] = src
		return e.Call(tok, "git_document_get", args)
	}
	for name, args := range map[string]map[string]any{
		"start inside a character":          {"start_byte": 1},
		"start past the end":                {"start_byte": len(doc) + 1},
		"max_bytes 1 at a 4-byte character": {"max_bytes": 1},
		"max_bytes 3 at a 4-byte character": {"start_byte": 4, "max_bytes": 3},
	} {
		args["source_id"] = src
		e.WantCode(tok, "git_document_get", args, "byte_range_invalid")
		_ = name
	}
	for _, mb := range []int{0, -1} {
		e.WantCode(tok, "git_document_get", map[string]any{"source_id": src, "max_bytes": mb}, "invalid_argument")
	}
	// A fragment limit of 1 can never hold a 4-byte character.
	e.WantCode(tok, "git_document_get", map[string]any{"source_id": one}, "byte_range_invalid")
	// start_byte = total: an empty final fragment without a cursor.
	if sc, isErr, raw := get(map[string]any{"start_byte": len(doc)}); isErr || sc["content"] != "" || sc["next_cursor"] != nil {
		t.Errorf("start at the total: %s", raw)
	}
	// max_bytes above the limit is clamped to 65,536, a multiple of 4 here.
	sc, isErr, raw := get(map[string]any{"max_bytes": 70000})
	if isErr || len(sc["content"].(string)) != 65536 || sc["next_cursor"] == nil {
		t.Errorf("max_bytes 70000: %.200s", raw)
	}
	// max_bytes 7 ends on the boundary before it: one character.
	if sc, isErr, raw := get(map[string]any{"start_byte": 8, "max_bytes": 7}); isErr || sc["content"] != "😀" ||
		sc["fragment_sha256"] != servertest.HexSHA([]byte("😀")) || sc["sha256"] != servertest.HexSHA(doc) {
		t.Errorf("start 8 max 7: %.200s", raw)
	}
}

// Row IN-08: hostile JSON-RPC envelopes over HTTP. Case-folded,
// NUL-suffixed and duplicate keys are refused, not matched; each class of
// error gets its code; no response carries "error":null or "id":null.
func TestIN08HostileEnvelopes(t *testing.T) {
	t.Parallel()
	e := servertest.New(t)
	tok := e.Token(e.NewTenant("o", "r"), "memory:read")
	tests := []struct {
		name, body string
		status     int
		code       string
	}{
		{"Method", `{"jsonrpc":"2.0","id":1,"Method":"tools/call","params":{"name":"memory_get","arguments":{"key":"k"}}}`, 400, `"code":-32600`},
		{"method and METHOD", `{"jsonrpc":"2.0","id":1,"method":"ping","METHOD":"tools/call"}`, 400, `"code":-32600`},
		{"duplicate name in params", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"memory_get","name":"memory_put","arguments":{"key":"k"}}}`, 400, `"code":-32600`},
		{"name with NUL", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name\u0000":"memory_put","name":"memory_get","arguments":{"key":"k"}}}`, 200, `"code":-32602`},
		{"argument key with NUL", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"memory_get","arguments":{"key\u0000":"k"}}}`, 200, `invalid_argument`},
		{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":1,"method":"ping"}`, 400, `"code":-32600`},
		{"object id", `{"jsonrpc":"2.0","id":{},"method":"ping"}`, 400, `"code":-32600`},
		{"trailing data", `{"jsonrpc":"2.0","id":1,"method":"ping"}{"jsonrpc":"2.0","id":2,"method":"ping"}`, 400, `"code":-32600`},
		{"trailing NUL", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\u0000", 400, `"code":-32`},
		{"params array", `{"jsonrpc":"2.0","id":1,"method":"ping","params":[]}`, 400, `"code":-32600`},
		{"arguments a string", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"memory_get","arguments":"x"}}`, 200, `"code":-32602`},
		{"unknown tool", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"shell_exec","arguments":{}}}`, 200, `"code":-32602`},
		{"unknown method", `{"jsonrpc":"2.0","id":1,"method":"foo/bar"}`, 200, `"code":-32601`},
		{"bad JSON", `{"jsonrpc":"2.0","id":1,"method":`, 400, `"code":-32700`},
	}
	for _, tt := range tests {
		r := e.Post(tt.body, "Authorization", "Bearer "+tok)
		if r.Status != tt.status || !strings.Contains(string(r.Raw), tt.code) {
			t.Errorf("%s: HTTP %d %s, want %d with %s", tt.name, r.Status, r.Raw, tt.status, tt.code)
		}
		if strings.Contains(string(r.Raw), `"error":null`) || strings.Contains(string(r.Raw), `"id":null`) {
			t.Errorf("%s: null error or id: %s", tt.name, r.Raw)
		}
	}
	if n := e.CountRows("memories"); n != 0 {
		t.Errorf("a refused envelope wrote %d memories", n)
	}
}

// Row IN-09: HTTP framing. 100,000-deep nesting is refused quickly with
// bounded memory (-32600: nesting is bounded at 64); a 2 MB header is
// refused by net/http with 431 before any handler. (413, 400 for a batch,
// 415 and 400 for a bad MCP-Protocol-Version are in TestMCPTransport; the
// real server's 32 KiB header bound is in TestIN09HeaderBoundOfServe.)
// Decision: authentication comes first — a request without a valid token
// gets 401 and its body is never parsed; the size, type and parse checks
// then apply to authenticated requests before any tool runs.
func TestIN09DeepNestingAndHugeHeaders(t *testing.T) {
	t.Parallel()
	e := servertest.New(t)
	tok := e.Token(e.NewTenant("o", "r"), "memory:read")
	for name, body := range map[string]string{
		"deep arrays in params": `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":` + strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000) + `}}`,
		"deep objects":          `{"jsonrpc":"2.0","id":1,"method":"ping","params":` + strings.Repeat(`{"a":`, 100_000) + "1" + strings.Repeat("}", 100_000) + `}`,
		"top-level deep array":  strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000),
	} {
		start := time.Now()
		r := e.Post(body, "Authorization", "Bearer "+tok)
		if r.Status != 400 || !strings.Contains(string(r.Raw), `"code":-32600`) {
			t.Errorf("%s: HTTP %d %.200s", name, r.Status, r.Raw)
		}
		d := time.Since(start)
		soak.Gate(t, d <= 2*time.Second, "%s took %v", name, d)
	}
	req, _ := http.NewRequest("POST", e.Srv.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("X-Big", strings.Repeat("a", 2<<20))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("2 MB header: %d, want 431", resp.StatusCode)
	}
	// Without a token, an oversized body is not even read: 401.
	if r := e.Post(`{"x":"` + strings.Repeat("a", 2<<20) + `"}`); r.Status != 401 {
		t.Errorf("unauthenticated 2 MiB body: HTTP %d, want 401", r.Status)
	}
}

// Row IN-10: hostile tool arguments are invalid_argument (or, for a
// source_id that is not a UUID, source_not_found, exactly like an unknown
// one — pinned), bounded before any store call, and no SQL text appears.
func TestIN10HostileArguments(t *testing.T) {
	t.Parallel()
	e := servertest.New(t)
	tn := e.NewTenant("o", "r")
	e.GH.AddFile("o", "r", servertest.CommitA, "x.md", []byte("hello"))
	src := e.AddSource(tn, "runtime", "x.md", servertest.CommitA, "", 65536)
	tok := e.Token(tn, "documents:read", "memory:read", "memory:write", "tasks:read", "tasks:write")
	var raws []string
	check := func(tool string, args map[string]any, code string) {
		t.Helper()
		sc := e.WantCode(tok, tool, args, code)
		raws = append(raws, sc["error"].(map[string]any)["message"].(string))
	}
	check("git_document_get", map[string]any{"source_id": "' OR 1=1--"}, "source_not_found")
	check("git_document_get", map[string]any{"source_id": "00000000-0000-0000-0000-000000000000'; DROP TABLE document_sources;--"}, "source_not_found")
	check("git_document_get", map[string]any{"source_id": 5}, "invalid_argument")
	check("git_document_get", map[string]any{"source_id": src, "start_byte": "1"}, "invalid_argument")
	check("git_document_get", map[string]any{"source_id": src, "start_byte": 1.5}, "invalid_argument")
	r := e.Post(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"git_document_get","arguments":{"source_id":"`+src+`","max_bytes":9223372036854775808}}}`,
		"Authorization", "Bearer "+tok)
	if !strings.Contains(string(r.Raw), "invalid_argument") {
		t.Errorf("max_bytes 2^63: %s", r.Raw)
	}
	check("memory_put", map[string]any{"key": strings.Repeat("k", 201), "content": "x"}, "invalid_argument")
	check("memory_put", map[string]any{"key": "k'--", "content": "x"}, "invalid_argument")
	check("memory_put", map[string]any{"key": "k", "content": strings.Repeat("x", 65537)}, "invalid_argument")
	check("memory_get", map[string]any{"key": "../../etc/passwd\x00"}, "invalid_argument")
	check("task_create", map[string]any{"title": strings.Repeat("t", 201)}, "invalid_argument")
	check("task_create", map[string]any{"title": "t", "body": strings.Repeat("b", 65537)}, "invalid_argument")
	check("task_get", map[string]any{"task_id": "' OR 1=1--"}, "not_found")
	// The log may hold the hostile source_id itself (JSON-escaped, LG-02),
	// so it is searched for driver text only.
	for _, m := range append(raws, string(r.Raw), e.Logs.String()) {
		for _, leak := range []string{"pq:", "SQLSTATE", "syntax error", "relation \"", "violates"} {
			if strings.Contains(m, leak) {
				t.Errorf("%q leaks SQL detail: %.200s", leak, m)
			}
		}
	}
	if n := e.CountRows("memories") + e.CountRows("tasks"); n != 0 {
		t.Errorf("refused arguments wrote %d rows", n)
	}
	if n := e.GH.Count(githubtest.RouteContents); n != 0 {
		t.Errorf("refused arguments made %d GitHub requests", n)
	}
}
