package tools_test

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"heyaira/github/githubtest"
	"heyaira/server"
	"heyaira/server/internal/servertest"
)

// Rows AZ-11, CU-09, LG-03 (docs/security-tests.md).
func TestDocumentReadWholeFileThroughCursors(t *testing.T) {
	t.Parallel()
	e := servertest.New(t)
	tn := e.NewTenant("h8v6", "heyaira")
	doc := servertest.MixedText(200_000)
	e.GH.AddFile("h8v6", "heyaira", servertest.CommitA, "docs/big.md", doc)
	src := e.AddSource(tn, "runtime", "docs/big.md", servertest.CommitA, "", 65536)
	tok := e.Token(tn, "documents:read")

	var got []byte
	args := map[string]any{"source_id": src}
	fragments := 0
	for {
		sc, isErr, raw := e.Call(tok, "git_document_get", args)
		if isErr {
			t.Fatalf("fragment %d: %s", fragments, raw)
		}
		fragments++
		content := []byte(sc["content"].(string))
		rng := sc["range"].(map[string]any)
		start, end, total := int(rng["start_byte"].(float64)), int(rng["end_byte"].(float64)), int(rng["total_bytes"].(float64))
		switch {
		case start != len(got) || end != start+len(content) || total != len(doc):
			t.Fatalf("fragment %d: range %v after %d bytes", fragments, rng, len(got))
		case len(content) > 65536 || !utf8.Valid(content):
			t.Fatalf("fragment %d: %d bytes, valid UTF-8 %v", fragments, len(content), utf8.Valid(content))
		case sc["sha256"] != servertest.HexSHA(doc) || sc["fragment_sha256"] != servertest.HexSHA(content):
			t.Fatalf("fragment %d: wrong hashes", fragments)
		case sc["commit_sha"] != servertest.CommitA || sc["path"] != "docs/big.md" || sc["github_owner"] != "h8v6":
			t.Fatalf("fragment %d: wrong identity %v", fragments, sc)
		}
		got = append(got, content...)
		next, ok := sc["next_cursor"].(string)
		if end < total != ok {
			t.Fatalf("fragment %d: next_cursor present = %v with end %d of %d", fragments, ok, end, total)
		}
		if !ok {
			break
		}
		args = map[string]any{"source_id": src, "cursor": next}
	}
	if !bytes.Equal(got, doc) {
		t.Fatalf("reassembled %d bytes, differ from the %d original", len(got), len(doc))
	}
	// Exactly one GitHub contents request per fragment, no cache.
	if n := e.GH.Count(githubtest.RouteContents); n != fragments {
		t.Errorf("%d contents requests for %d fragments", n, fragments)
	}
	// Every read is audited with range and hashes, never content.
	if n := e.CountRows(`audit_events WHERE action = 'document.read' AND outcome = 'ok'`); n != fragments {
		t.Errorf("%d audit rows for %d reads", n, fragments)
	}
	if strings.Contains(e.QueryString(`SELECT string_agg(details::text, ' ') FROM audit_events`), "plain ascii") {
		t.Error("audit rows contain document content")
	}
	if e.GH.SawAuthorization("Bearer " + tok) {
		t.Error("the MCP bearer token reached GitHub")
	}
}

// A fragment limit under 4 bytes cannot hold every character. The read
// that meets one longer than the limit fails with byte_range_invalid, and
// its message names the source's limit, which only an administrator can
// change, not max_bytes, which the caller did not send.
func TestDocumentFragmentLimitBelowACharacter(t *testing.T) {
	t.Parallel()
	e := servertest.New(t)
	tn := e.NewTenant("o", "r")
	e.GH.AddFile("o", "r", servertest.CommitA, "x.md", []byte("ab😀cd"))
	src := e.AddSource(tn, "runtime", "x.md", servertest.CommitA, "", 3)
	tok := e.Token(tn, "documents:read")
	sc, isErr, raw := e.Call(tok, "git_document_get", map[string]any{"source_id": src})
	next, _ := sc["next_cursor"].(string)
	if isErr || sc["content"] != "ab" || next == "" {
		t.Fatalf("first fragment under a limit of 3: %s", raw)
	}
	message := func(args map[string]any) string {
		m, _ := e.WantCode(tok, "git_document_get", args, "byte_range_invalid")["error"].(map[string]any)["message"].(string)
		return m
	}
	if m := message(map[string]any{"source_id": src, "cursor": next}); !strings.Contains(m, "fragment limit of 3 bytes") {
		t.Errorf("continuing into 😀 under a limit of 3: %q, want the source's fragment limit named", m)
	}
	if m := message(map[string]any{"source_id": src, "start_byte": 2, "max_bytes": 2}); !strings.HasPrefix(m, "max_bytes") {
		t.Errorf("max_bytes 2 at 😀: %q, want max_bytes named", m)
	}
}

// Row IN-07 (docs/security-tests.md).
func TestDocumentRanges(t *testing.T) {
	t.Parallel()
	e := servertest.New(t)
	tn := e.NewTenant("o", "r")
	doc := []byte("aé€😀") // 1+2+3+4 bytes
	e.GH.AddFile("o", "r", servertest.CommitA, "x.md", doc)
	src := e.AddSource(tn, "runtime", "x.md", servertest.CommitA, "", 65536)
	tok := e.Token(tn, "documents:read")

	e.WantCode(tok, "git_document_get", map[string]any{"source_id": src, "start_byte": 2}, "byte_range_invalid")
	e.WantCode(tok, "git_document_get", map[string]any{"source_id": src, "start_byte": 11}, "byte_range_invalid")
	e.WantCode(tok, "git_document_get", map[string]any{"source_id": src, "start_byte": -1}, "byte_range_invalid")
	e.WantCode(tok, "git_document_get", map[string]any{"source_id": src, "start_byte": 6, "max_bytes": 3}, "byte_range_invalid")
	e.WantCode(tok, "git_document_get", map[string]any{"source_id": src, "max_bytes": 0}, "invalid_argument")
	e.WantCode(tok, "git_document_get", map[string]any{"source_id": src, "start_byte": 1.5}, "invalid_argument")
	// An integer is written as one (docs/design.md, Decisions).
	e.WantCode(tok, "git_document_get", map[string]any{"source_id": src, "start_byte": json.Number("1.0")}, "invalid_argument")
	e.WantCode(tok, "git_document_get", map[string]any{"source_id": src, "max_bytes": json.Number("1e2")}, "invalid_argument")

	// The end moves back to a character boundary.
	sc, _, _ := e.Call(tok, "git_document_get", map[string]any{"source_id": src, "start_byte": 1, "max_bytes": 4})
	if sc["content"] != "é" || sc["next_cursor"] == nil {
		t.Errorf("start 1 max 4 = %v, want é and a cursor", sc)
	}
	// start_byte equal to the size: an empty final fragment without a cursor.
	sc, isErr, raw := e.Call(tok, "git_document_get", map[string]any{"source_id": src, "start_byte": 10})
	if isErr || sc["content"] != "" || sc["next_cursor"] != nil || sc["fragment_sha256"] != servertest.HexSHA(nil) {
		t.Errorf("start at total = %s, want empty content and no cursor", raw)
	}
	// max_bytes above the fragment limit is clamped, not refused.
	sc, isErr, _ = e.Call(tok, "git_document_get", map[string]any{"source_id": src, "max_bytes": 1 << 30})
	if isErr || sc["content"] != string(doc) {
		t.Errorf("large max_bytes = %v", sc)
	}
}

// Rows AZ-06, CU-04 (docs/security-tests.md).
func TestDocumentArgumentsAreStrict(t *testing.T) {
	t.Parallel()
	e := servertest.New(t)
	tn := e.NewTenant("o", "r")
	e.GH.AddFile("o", "r", servertest.CommitA, "x.md", []byte("hello"))
	src := e.AddSource(tn, "runtime", "x.md", servertest.CommitA, "", 65536)
	tok := e.Token(tn, "documents:read")
	first, _, _ := e.Call(tok, "git_document_get", map[string]any{"source_id": src, "max_bytes": 2})
	before := e.GH.Count(githubtest.RouteContents)
	for _, args := range []map[string]any{
		{"source_id": src, "path": "../etc/passwd"},
		{"source_id": src, "ref": "main"},
		{"source_id": src, "url": "https://evil.example/"},
		{"Source_ID": src},
		{},
		{"source_id": 5},
		{"source_id": src, "cursor": first["next_cursor"], "start_byte": 0},
	} {
		e.WantCode(tok, "git_document_get", args, "invalid_argument")
	}
	if after := e.GH.Count(githubtest.RouteContents); after != before {
		t.Errorf("invalid arguments caused %d provider requests", after-before)
	}
	// Duplicate keys inside arguments are refused by the envelope decoder.
	r := e.Post(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"git_document_get",`+
		`"arguments":{"source_id":"`+src+`","source_id":"x"}}}`, "Authorization", "Bearer "+tok)
	if r.Status != 400 {
		t.Errorf("duplicate argument keys: HTTP %d %s", r.Status, r.Raw)
	}
}

// Rows AZ-05, AZ-07 (docs/security-tests.md).
func TestDocumentSourceStates(t *testing.T) {
	t.Parallel()
	e := servertest.New(t)
	tn := e.NewTenant("o", "r")
	other := e.NewTenant("o", "other")
	e.GH.AddFile("o", "r", servertest.CommitA, "x.md", []byte("hello"))
	e.GH.AddFile("o", "other", servertest.CommitA, "x.md", []byte("secret"))
	tok := e.Token(tn, "documents:read")

	// No runtime source yet.
	e.WantCode(tok, "runtime_bootstrap_get", map[string]any{}, "runtime_unconfigured")
	ref := e.AddSource(tn, "reference", "x.md", servertest.CommitA, "", 65536)
	e.WantCode(tok, "runtime_bootstrap_get", map[string]any{}, "runtime_unconfigured")
	runtime := e.AddSource(tn, "runtime", "x.md", servertest.CommitA, "", 1000)
	tracking := e.AddSource(tn, "instruction", "x.md", "", "main", 65536)
	revoked := e.AddSource(tn, "reference", "x.md", servertest.CommitA, "", 65536)
	e.Exec(`UPDATE document_sources SET revoked_at = now() WHERE id = $1`, revoked)
	foreign := e.AddSource(other, "runtime", "x.md", servertest.CommitA, "", 65536)

	boot, isErr, raw := e.Call(tok, "runtime_bootstrap_get", map[string]any{})
	if isErr || boot["project_id"] != tn.Project {
		t.Fatalf("bootstrap: %s", raw)
	}
	seen := map[string]map[string]any{}
	for _, s := range boot["sources"].([]any) {
		m := s.(map[string]any)
		seen[m["source_id"].(string)] = m
	}
	if len(seen) != 3 || seen[revoked] != nil || seen[foreign] != nil {
		t.Fatalf("bootstrap lists %v, want ref, runtime and tracking only", seen)
	}
	if tr := seen[tracking]; tr["commit_sha"] != nil || tr["tracking_ref"] != "main" {
		t.Errorf("tracking source = %v, want commit_sha null and tracking_ref main", tr)
	}
	if rt := seen[runtime]; rt["tracking_ref"] != nil || rt["limits"].(map[string]any)["max_fragment_bytes"] != 1000.0 ||
		rt["limits"].(map[string]any)["max_file_bytes"] != 1048576.0 {
		t.Errorf("runtime source = %v", rt)
	}
	_ = ref

	before := e.GH.Count(githubtest.RouteContents)
	// Another project's source and a random id give byte-identical results.
	_, _, foreignRaw := e.Call(tok, "git_document_get", map[string]any{"source_id": foreign})
	_, _, randomRaw := e.Call(tok, "git_document_get", map[string]any{"source_id": "6f1d1c8e-0000-4000-8000-000000000000"})
	_, _, junkRaw := e.Call(tok, "git_document_get", map[string]any{"source_id": "not-a-uuid"})
	if foreignRaw != randomRaw || randomRaw != junkRaw || !strings.Contains(randomRaw, "source_not_found") {
		t.Errorf("not-found results differ:\n%s\n%s\n%s", foreignRaw, randomRaw, junkRaw)
	}
	e.WantCode(tok, "git_document_get", map[string]any{"source_id": revoked}, "source_revoked")
	e.WantCode(tok, "git_document_get", map[string]any{"source_id": tracking}, "source_requires_dispatch")
	if after := e.GH.Count(githubtest.RouteContents); after != before {
		t.Errorf("refused reads caused %d provider requests", after-before)
	}
	e.Exec(`UPDATE repositories SET revoked_at = now() WHERE id = $1`, tn.Repo)
	e.WantCode(tok, "git_document_get", map[string]any{"source_id": runtime}, "repository_revoked")
}

// Rows AZ-03, BT-02 (docs/security-tests.md).
func TestDocumentToolsNeedDocumentsScope(t *testing.T) {
	t.Parallel()
	e := servertest.New(t)
	tn := e.NewTenant("o", "r")
	e.GH.AddFile("o", "r", servertest.CommitA, "x.md", []byte("hello"))
	src := e.AddSource(tn, "runtime", "x.md", servertest.CommitA, "", 65536)
	meta := e.Cfg.PublicURL + "/.well-known/oauth-protected-resource/mcp"
	// The challenge names the scope needed and those already granted (MP-04).
	challenge := func(scope string) string {
		desc := "insufficient scope: documents:read is required"
		if strings.Contains(scope, "tasks:write") && !strings.Contains(scope, "workflows") {
			desc = "insufficient scope: legacy tokens can never read documents or use workflows; " +
				"connect this client with OAuth (the server URL alone is enough) and approve documents:read"
		}
		return `Bearer error="insufficient_scope", scope="` + scope + `", error_description="` + desc +
			`", resource_metadata="` + meta + `"`
	}
	auditBefore := e.CountRows("audit_events")
	for name, tt := range map[string]struct{ tok, want string }{
		"legacy": {e.LegacyToken(tn), challenge("documents:read memory:read memory:write tasks:read tasks:write")},
		"oauth without documents:read": {e.Token(tn, "workflows:write", "memory:read", "memory:write", "tasks:read", "tasks:write",
			"workflows:read"), challenge("documents:read memory:read memory:write tasks:read tasks:write workflows:read workflows:write")},
		"oauth with one scope": {e.Token(tn, "tasks:read"), challenge("documents:read tasks:read")},
	} {
		tok, want := tt.tok, tt.want
		for _, tool := range []string{"runtime_bootstrap_get", "git_document_get"} {
			r := e.RPC(tok, "tools/call", map[string]any{"name": tool, "arguments": map[string]any{"source_id": src}})
			if r.Status != 403 || r.Header.Get("WWW-Authenticate") != want {
				t.Errorf("%s on %s: HTTP %d %q, want 403 %q", name, tool, r.Status, r.Header.Get("WWW-Authenticate"), want)
			}
		}
	}
	if n := e.GH.Count(githubtest.RouteContents) + e.GH.Count(githubtest.RouteMint); n != 0 {
		t.Errorf("%d provider requests without the scope", n)
	}
	if n := e.CountRows("audit_events"); n != auditBefore {
		t.Errorf("%d store writes without the scope", n-auditBefore)
	}
}

// TestDocumentCursors: a cursor of a file that changed between pages is
// provider_inconsistent, and one older than its lifetime cursor_expired.
// Misuse (tampering, another source, principal or project) is
// TestCU01to04CursorMisuseReachesNothing.
// Rows CU-01, CU-05, CU-06 (docs/security-tests.md).
func TestDocumentCursors(t *testing.T) {
	t.Parallel()
	clk := servertest.NewManualClock(time.Now())
	e := servertest.New(t, func(c *server.Config) { c.Now = clk.Now })
	tn := e.NewTenant("o", "r")
	doc := servertest.MixedText(3000)
	e.GH.AddFile("o", "r", servertest.CommitA, "a.md", doc)
	srcA := e.AddSource(tn, "runtime", "a.md", servertest.CommitA, "", 1000)
	tok := e.Token(tn, "documents:read")
	sc, _, _ := e.Call(tok, "git_document_get", map[string]any{"source_id": srcA})
	cur := sc["next_cursor"].(string)
	// The file changed under the cursor: provider_inconsistent.
	e.GH.AddFile("o", "r", servertest.CommitA, "a.md", append([]byte("changed "), doc...))
	e.WantCode(tok, "git_document_get", map[string]any{"source_id": srcA, "cursor": cur}, "provider_inconsistent")
	e.GH.AddFile("o", "r", servertest.CommitA, "a.md", doc)
	// Fifteen minutes later the cursor has expired.
	clk.Add(15*time.Minute + time.Second)
	e.WantCode(tok, "git_document_get", map[string]any{"source_id": srcA, "cursor": cur}, "cursor_expired")
}

// Row LG-01 (docs/security-tests.md).
func TestLogsHoldNoSecretsOrContent(t *testing.T) {
	t.Parallel()
	e := servertest.New(t)
	tn := e.NewTenant("o", "r")
	canary := "CANARY-CONTENT-" + rand.Text()
	e.GH.AddFile("o", "r", servertest.CommitA, "x.md", []byte(strings.Repeat(canary+" ", 100)))
	src := e.AddSource(tn, "runtime", "x.md", servertest.CommitA, "", 100)
	tok := e.Token(tn, "documents:read", "memory:write")
	legacy := e.LegacyToken(tn)
	sc, _, _ := e.Call(tok, "git_document_get", map[string]any{"source_id": src})
	cur := sc["next_cursor"].(string)
	e.Call(tok, "git_document_get", map[string]any{"source_id": src, "cursor": cur})
	e.Call(tok, "git_document_get", map[string]any{"source_id": src, "cursor": cur + "A"})
	e.Call(tok, "memory_put", map[string]any{"key": "k", "content": canary})
	e.RPC(legacy, "tools/call", map[string]any{"name": "git_document_get", "arguments": map[string]any{"source_id": src}})
	e.Post(`{"jsonrpc":"2.0","id":1,"method":"ping"}`, "Authorization", "Bearer hya_"+canary)
	logs := e.Logs.String()
	if !strings.Contains(logs, `"req_id"`) {
		t.Fatal("no request was logged")
	}
	for _, secret := range []string{tok, legacy, cur, canary, cur[:32]} {
		if strings.Contains(logs, secret) {
			t.Errorf("logs contain %.24q…", secret)
		}
	}
}
