package tools_test

import (
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"heyaira/github/githubtest"
	"heyaira/server/internal/servertest"

	"github.com/google/go-cmp/cmp"
)

// method sends one method and returns its result, or fails the test.
func method(e *servertest.Env, tok, method string, params map[string]any) map[string]any {
	e.T.Helper()
	var p any
	if params != nil {
		p = params
	}
	r := e.RPC(tok, method, p)
	res, _ := r.Body["result"].(map[string]any)
	if r.Status != http.StatusOK || res == nil {
		e.T.Fatalf("%s(%v): HTTP %d %s", method, params, r.Status, r.Raw)
	}
	for _, c := range anySlice(res["contents"]) {
		e.Canaries.Content("resource text", c.(map[string]any)["text"].(string))
	}
	return res
}

// methodError sends one method that must fail with a JSON-RPC error of
// code rpcCode whose data carries the stable code.
func methodError(e *servertest.Env, tok, method string, params map[string]any, rpcCode float64, code string) {
	e.T.Helper()
	r := e.RPC(tok, method, params)
	got, data := servertest.RPCErrorOf(e.T.(*testing.T), r)
	if r.Status != http.StatusOK || got != rpcCode || data["code"] != code {
		e.T.Fatalf("%s(%v): HTTP %d %s; want error %v with data.code %s", method, params, r.Status, r.Raw, rpcCode, code)
	}
}

func anySlice(v any) []any { s, _ := v.([]any); return s }

// TestResources lists exactly the project's pinned sources from the database
// (no GitHub request), reads one whole and one large through the read path
// of git_document_get (its audit row, its cursor), and answers a source it
// cannot read as a resource, whoever's it is, as one that is not there.
// Row AZ-16: resources are the project's own pinned sources, read through the
// document path; another project's, a revoked or tracking source and a made-up
// id are refused alike, and a malformed URI writes nothing.
func TestResources(t *testing.T) {
	t.Parallel()
	e := servertest.New(t)
	tn := e.NewTenant("o", "r")
	other := e.NewTenant("o2", "r2")
	small, big := []byte("# Runbook\nsmall é\n"), servertest.MixedText(100_000)
	e.GH.AddFile("o", "r", servertest.CommitA, "docs/runbook.md", small)
	e.GH.AddFile("o", "r", servertest.CommitA, "notes/big.txt", big)
	runbook := e.AddSource(tn, "runtime", "docs/runbook.md", servertest.CommitA, "", 65536)
	large := e.AddSource(tn, "reference", "notes/big.txt", servertest.CommitA, "", 65536)
	tracking := e.AddSource(tn, "instruction", "docs/track.md", "", "main", 65536)
	revoked := e.AddSource(tn, "reference", "docs/old.md", servertest.CommitA, "", 65536)
	e.Exec(`UPDATE document_sources SET revoked_at = now() WHERE id = $1`, revoked)
	elsewhere := e.AddSource(other, "runtime", "docs/runbook.md", servertest.CommitA, "", 65536)
	tok := e.Token(tn, "documents:read")

	res := method(e, tok, "resources/list", nil)
	var uris []string
	for _, r := range anySlice(res["resources"]) {
		uris = append(uris, r.(map[string]any)["uri"].(string))
	}
	want := []string{"heyaira://sources/" + runbook, "heyaira://sources/" + large}
	if runbook > large {
		want[0], want[1] = want[1], want[0]
	}
	if diff := cmp.Diff(want, uris); diff != "" || res["nextCursor"] != nil {
		t.Fatalf("resources (-want +got):\n%s\n%v", diff, res)
	}
	first := anySlice(res["resources"])[0].(map[string]any)
	if first["mimeType"] == nil || !strings.Contains(first["title"].(string), "o/r:") ||
		!strings.Contains(first["title"].(string), "@"+servertest.CommitA[:12]+" (") || first["_meta"].(map[string]any)["io.heyaira/commit_sha"] != servertest.CommitA {
		t.Errorf("resource %v", first)
	}
	if n := e.GH.Count(githubtest.RouteContents); n != 0 {
		t.Errorf("resources/list made %d GitHub requests", n)
	}

	whole := method(e, tok, "resources/read", map[string]any{"uri": "heyaira://sources/" + runbook})
	c := anySlice(whole["contents"])
	if len(c) != 1 || c[0].(map[string]any)["text"] != string(small) || c[0].(map[string]any)["mimeType"] != "text/markdown" ||
		c[0].(map[string]any)["_meta"].(map[string]any)["io.heyaira/sha256"] != servertest.HexSHA(small) {
		t.Fatalf("whole read %v", whole)
	}
	if n := e.CountRows(`audit_events WHERE action = 'document.read' AND outcome = 'ok' AND target = '` + runbook + `'`); n != 1 {
		t.Errorf("%d audit rows for the whole read", n)
	}

	part := method(e, tok, "resources/read", map[string]any{"uri": "heyaira://sources/" + large})
	c = anySlice(part["contents"])
	frag := c[0].(map[string]any)
	meta := frag["_meta"].(map[string]any)
	next, _ := meta["io.heyaira/next_cursor"].(string)
	e.Canaries.Secret("cursor", next)
	if text := frag["text"].(string); len(c) != 2 || len(text) > 65536 || !utf8.ValidString(text) || !strings.HasPrefix(string(big), text) ||
		meta["io.heyaira/sha256"] != servertest.HexSHA(big) || meta["io.heyaira/fragment_sha256"] != servertest.HexSHA([]byte(text)) || next == "" ||
		!strings.Contains(c[1].(map[string]any)["text"].(string), "git_document_get") {
		t.Fatalf("large read: %d contents, meta %v", len(c), meta)
	}
	sc := mustCall(e, tok, "git_document_get", map[string]any{"source_id": large, "cursor": next})
	if sc["range"].(map[string]any)["start_byte"].(float64) != float64(len(frag["text"].(string))) {
		t.Errorf("the resource's cursor continued at %v", sc["range"])
	}

	// Not a resource of this project: the same refusal, and the read path's
	// audit row, whatever the reason.
	for _, id := range []string{elsewhere, revoked, tracking, "00000000-0000-4000-8000-000000000000"} {
		methodError(e, tok, "resources/read", map[string]any{"uri": "heyaira://sources/" + id}, -32002, "source_not_found")
	}
	// Malformed: invalid params, and nothing is written.
	rows := e.CountRows("audit_events")
	for _, uri := range []string{"https://sources/" + runbook, "heyaira://sources/" + runbook + "/x",
		"heyaira://sources/" + runbook + "?a=1", "heyaira://sources/" + runbook + "#f", "heyaira://sources/runbook",
		"heyaira://other/" + runbook} {
		methodError(e, tok, "resources/read", map[string]any{"uri": uri}, -32602, "invalid_argument")
	}
	methodError(e, tok, "resources/read", map[string]any{"uri": "heyaira://sources/" + runbook, "extra": 1}, -32602, "invalid_argument")
	methodError(e, tok, "resources/list", map[string]any{"cursor": next}, -32602, "cursor_invalid")
	if n := e.CountRows("audit_events"); n != rows {
		t.Errorf("refused requests wrote %d audit rows", n-rows)
	}

	// Without documents:read: the step-up challenge, as the document tools.
	narrow := e.Token(tn, "memory:read")
	for _, m := range []string{"resources/list", "resources/read"} {
		r := e.RPC(narrow, m, map[string]any{"uri": "heyaira://sources/" + runbook})
		if r.Status != 403 || !strings.Contains(r.Header.Get("WWW-Authenticate"), `scope="documents:read memory:read"`) {
			t.Errorf("%s without documents:read: %d %q", m, r.Status, r.Header.Get("WWW-Authenticate"))
		}
	}
}

// TestResourcePagesAndCompletion pages a long allowlist with an opaque
// cursor, and completes the template's source_id from the allowlist only.
// Row AZ-17: completion names only the project's allowlist, and only to a
// token with documents:read.
func TestResourcePagesAndCompletion(t *testing.T) {
	t.Parallel()
	e := servertest.New(t)
	tn := e.NewTenant("o", "r")
	other := e.NewTenant("o2", "r2")
	e.Exec(`INSERT INTO document_sources (project_id, repository_id, role, path, commit_sha, fragment_limit)
		SELECT $1, $2, 'reference', 'docs/p' || i || '.md', $3, 65536 FROM generate_series(1, 104) i`, tn.Project, tn.Repo, servertest.CommitA)
	guide := e.AddSource(tn, "runtime", "guide/start.md", servertest.CommitA, "", 65536)
	e.AddSource(other, "runtime", "guide/secret.md", servertest.CommitA, "", 65536)
	tok := e.Token(tn, "documents:read")

	page := method(e, tok, "resources/list", nil)
	cursor, _ := page["nextCursor"].(string)
	rest := method(e, tok, "resources/list", map[string]any{"cursor": cursor})
	if n, m := len(anySlice(page["resources"])), len(anySlice(rest["resources"])); n != 100 || m != 5 || cursor == "" || rest["nextCursor"] != nil {
		t.Fatalf("pages of %d and %d, cursor %q then %v", n, m, cursor, rest["nextCursor"])
	}

	// An empty allowlist is an empty list, with no cursor (not null).
	r := e.RPC(e.Token(e.NewTenant("o3", "r3"), "documents:read"), "resources/list", nil)
	if !strings.Contains(string(r.Raw), `"resources":[]`) || strings.Contains(string(r.Raw), "nextCursor") {
		t.Errorf("empty list: %s", r.Raw)
	}

	template := method(e, tok, "resources/templates/list", nil)
	if diff := cmp.Diff("heyaira://sources/{source_id}", anySlice(template["resourceTemplates"])[0].(map[string]any)["uriTemplate"]); diff != "" {
		t.Error(diff)
	}
	complete := func(ref map[string]any, name, value string) map[string]any {
		res := method(e, tok, "completion/complete", map[string]any{"ref": ref, "argument": map[string]any{"name": name, "value": value}})
		return res["completion"].(map[string]any)
	}
	ref := map[string]any{"type": "ref/resource", "uri": "heyaira://sources/{source_id}"}
	if got := complete(ref, "source_id", "guide/"); !cmp.Equal(got["values"], []any{guide}) {
		t.Errorf("completion by path: %v", got)
	}
	if got := complete(ref, "source_id", guide[:8]); !cmp.Equal(got["values"], []any{guide}) {
		t.Errorf("completion by id: %v", got)
	}
	if got := complete(ref, "source_id", ""); len(anySlice(got["values"])) != 100 || got["total"] != 105.0 || got["hasMore"] != true {
		t.Errorf("completion of everything: %d values, total %v", len(anySlice(got["values"])), got["total"])
	}
	if got := complete(map[string]any{"type": "ref/prompt", "name": "engineer"}, "mode", "v"); !cmp.Equal(got["values"], []any{"verifier"}) {
		t.Errorf("mode completion: %v", got)
	}
	for _, bad := range []map[string]any{{"type": "ref/tool", "name": "x"}, {"type": "ref/resource", "uri": "heyaira://x/{y}"}} {
		methodError(e, tok, "completion/complete", map[string]any{"ref": bad, "argument": map[string]any{"name": "source_id", "value": ""}},
			-32602, "invalid_argument")
	}
	methodError(e, tok, "completion/complete", map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": "boss"},
		"argument": map[string]any{"name": "mode", "value": ""}}, -32602, "profile_not_found")
	// The allowlist's names need documents:read.
	r = e.RPC(e.Token(tn, "workflows:read"), "completion/complete", map[string]any{"ref": ref, "argument": map[string]any{"name": "source_id", "value": ""}})
	if r.Status != 403 {
		t.Errorf("completion without documents:read: %d %s", r.Status, r.Raw)
	}
}

// TestPrompts offers each catalog profile as a prompt and assembles it as
// workflow_dispatch would, storing no workflow and writing one audit row.
// Row AU-03: prompts/get writes one audit row naming its sources, stores no
// workflow, and needs documents:read for GitHub text.
func TestPrompts(t *testing.T) {
	t.Parallel()
	e := servertest.New(t)
	tn := e.NewTenant("o", "r")
	e.GH.AddFile("o", "r", servertest.CommitA, "docs/agents/engineer.md", []byte("Use the project's linter.\n"))
	src := instructionSource(e, tn, "docs/agents/engineer.md", servertest.CommitA, "", "engineer")
	tok := e.Token(tn, "workflows:read", "documents:read")

	list := method(e, tok, "prompts/list", nil)
	var names []string
	for _, p := range anySlice(list["prompts"]) {
		names = append(names, p.(map[string]any)["name"].(string))
	}
	if diff := cmp.Diff([]string{"engineer", "reviewer", "researcher"}, names); diff != "" {
		t.Errorf("prompts (-want +got):\n%s", diff)
	}

	got := method(e, tok, "prompts/get", map[string]any{"name": "engineer", "arguments": map[string]any{"mode": "worker"}})
	msg := anySlice(got["messages"])[0].(map[string]any)
	text := msg["content"].(map[string]any)["text"].(string)
	layers := anySlice(got["_meta"].(map[string]any)["io.heyaira/layers"])
	if msg["role"] != "user" || !strings.Contains(text, "Use the project's linter.") || len(layers) == 0 {
		t.Fatalf("prompt %v", got)
	}
	for _, l := range layers {
		if l.(map[string]any)["sha256"] == "" {
			t.Errorf("layer without its hash: %v", l)
		}
	}
	if n := e.CountRows("workflows"); n != 0 {
		t.Errorf("prompts/get stored %d workflows", n)
	}
	if n := e.CountRows(`audit_events WHERE action = 'prompt.get' AND outcome = 'ok' AND details::text LIKE '%` + src + `%'`); n != 1 {
		t.Errorf("%d prompt.get audit rows naming the source", n)
	}

	rows := e.CountRows("audit_events")
	methodError(e, tok, "prompts/get", map[string]any{"name": "boss", "arguments": map[string]any{"mode": "worker"}}, -32602, "profile_not_found")
	methodError(e, tok, "prompts/get", map[string]any{"name": "engineer", "arguments": map[string]any{"mode": "boss"}}, -32602, "invalid_argument")
	methodError(e, tok, "prompts/get", map[string]any{"name": "engineer", "arguments": map[string]any{"mode": "worker", "x": "1"}}, -32602, "invalid_argument")
	methodError(e, tok, "prompts/get", map[string]any{"arguments": map[string]any{"mode": "worker"}}, -32602, "invalid_argument")
	// A caller's name is echoed cut, as every echoed name is (web.Quote).
	long := e.RPC(tok, "prompts/get", map[string]any{"name": "engineer", "arguments": map[string]any{strings.Repeat("k", 100_000): "x"}})
	if _, data := servertest.RPCErrorOf(t, long); data["code"] != "invalid_argument" || len(data["message"].(string)) > 300 {
		t.Errorf("an unknown argument of 100,000 bytes: %.300s", long.Raw)
	}
	if n := e.CountRows("audit_events"); n != rows {
		t.Errorf("refused prompts wrote %d audit rows", n-rows)
	}
	// A profile holding GitHub text needs documents:read, as workflow_get's full view.
	r := e.RPC(e.Token(tn, "workflows:read"), "prompts/get", map[string]any{"name": "engineer", "arguments": map[string]any{"mode": "worker"}})
	if r.Status != 403 || !strings.Contains(r.Header.Get("WWW-Authenticate"), `scope="workflows:read documents:read`) {
		t.Errorf("prompts/get without documents:read: %d %q", r.Status, r.Header.Get("WWW-Authenticate"))
	}
	// Built-in text alone does not.
	method(e, e.Token(tn, "workflows:read"), "prompts/get", map[string]any{"name": "reviewer", "arguments": map[string]any{"mode": "verifier"}})
}

// TestResourcesModernEra: the same methods in 2026-07-28, with ttlMs and a
// private cacheScope, resource-not-found as -32602, and Mcp-Name naming the
// resource read.
func TestResourcesModernEra(t *testing.T) {
	t.Parallel()
	e := servertest.New(t)
	tn := e.NewTenant("o", "r")
	e.GH.AddFile("o", "r", servertest.CommitA, "docs/runbook.md", []byte("hello"))
	src := e.AddSource(tn, "runtime", "docs/runbook.md", servertest.CommitA, "", 65536)
	tok := e.Token(tn, "documents:read", "workflows:read")
	const v = "2026-07-28"
	for _, m := range []string{"resources/list", "resources/templates/list", "prompts/list"} {
		r := servertest.ModernPost(e, tok, m, v, v, map[string]any{})
		res, _ := r.Body["result"].(map[string]any)
		if r.Status != 200 || res["resultType"] != "complete" || res["cacheScope"] != "private" || res["ttlMs"] == nil {
			t.Errorf("%s: %d %s", m, r.Status, r.Raw)
		}
	}
	uri := "heyaira://sources/" + src
	r := servertest.ModernPost(e, tok, "resources/read", v, v, map[string]any{"uri": uri})
	if res, _ := r.Body["result"].(map[string]any); r.Status != 200 || res["ttlMs"] != float64(24*60*60*1000) {
		t.Errorf("read: %d %s", r.Status, r.Raw)
	}
	e.Canaries.Content("resource text", "hello")
	r = servertest.ModernPost(e, tok, "resources/read", v, v, map[string]any{"uri": "heyaira://sources/00000000-0000-4000-8000-000000000000"})
	if code, data := servertest.RPCErrorOf(t, r); code != -32602 || data["code"] != "source_not_found" {
		t.Errorf("modern not found: %s", r.Raw)
	}
	r = e.Post(servertest.ModernBody("resources/read", v, map[string]any{"uri": uri}), "Authorization", "Bearer "+tok,
		"MCP-Protocol-Version", v, "Mcp-Method", "resources/read", "Mcp-Name", "heyaira://sources/other")
	if code, _ := servertest.RPCErrorOf(t, r); r.Status != 400 || code != -32020 {
		t.Errorf("Mcp-Name mismatch: %d %s", r.Status, r.Raw)
	}
	for _, init := range []servertest.Reply{e.RPC(tok, "initialize", map[string]any{"protocolVersion": "2025-11-25"}), servertest.ModernPost(e, tok, "server/discover", v, v, nil)} {
		caps, _ := init.Body["result"].(map[string]any)["capabilities"].(map[string]any)
		if caps["resources"] == nil || caps["prompts"] == nil || caps["completions"] == nil {
			t.Errorf("capabilities %v", caps)
		}
	}
}
