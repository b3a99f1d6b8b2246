package mcp_test

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"heyaira/server/internal/servertest"
	"heyaira/server/mcp"

	"github.com/google/go-cmp/cmp"
)

// TestModernEra serves 2026-07-28 on /mcp beside the legacy era: discover,
// tools/list with ttlMs and a private cacheScope, tools/call whose result is
// the legacy one plus resultType, and the header rules (-32020, -32022,
// 404 + -32601).
func TestModernEra(t *testing.T) {
	t.Parallel()
	e := servertest.New(t)
	tn := e.NewTenant("o", "r")
	tok := e.Token(tn, "memory:read", "memory:write")
	const v = "2026-07-28"

	r := servertest.ModernPost(e, tok, "server/discover", v, v, nil)
	if r.Status != 200 {
		t.Fatalf("discover: %d %s", r.Status, r.Raw)
	}
	res, _ := r.Body["result"].(map[string]any)
	if res["resultType"] != "complete" || res["cacheScope"] != "private" || res["ttlMs"] == nil || res["instructions"] == "" {
		t.Errorf("discover result %s", r.Raw)
	}
	if diff := cmp.Diff([]any{"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}, res["supportedVersions"]); diff != "" {
		t.Errorf("supportedVersions (-want +got):\n%s", diff)
	}
	if meta, _ := res["_meta"].(map[string]any); meta["io.modelcontextprotocol/serverInfo"] == nil {
		t.Errorf("discover without serverInfo: %s", r.Raw)
	}

	r = servertest.ModernPost(e, tok, "tools/list", v, v, nil)
	res, _ = r.Body["result"].(map[string]any)
	legacy := e.RPC(tok, "tools/list", nil)
	if r.Status != 200 || res["resultType"] != "complete" || res["cacheScope"] != "private" || res["ttlMs"] == nil {
		t.Errorf("tools/list: %d %s", r.Status, r.Raw)
	}
	if diff := cmp.Diff(legacy.Body["result"].(map[string]any)["tools"], res["tools"]); diff != "" {
		t.Errorf("tools differ between the eras (-legacy +modern):\n%s", diff)
	}

	// The same call in both eras: the result differs only by resultType.
	e.Call(tok, "memory_put", map[string]any{"key": "k", "content": "välue"})
	call := map[string]any{"name": "memory_get", "arguments": map[string]any{"key": "k"}}
	r = servertest.ModernPost(e, tok, "tools/call", v, v, call)
	leg := e.RPC(tok, "tools/call", map[string]any{"name": "memory_get", "arguments": map[string]any{"key": "k"}})
	var modernRes, legacyRes struct {
		Result json.RawMessage `json:"result"`
	}
	json.Unmarshal(r.Raw, &modernRes)
	json.Unmarshal(leg.Raw, &legacyRes)
	if want := `{"resultType":"complete",` + string(legacyRes.Result[1:]); r.Status != 200 || string(modernRes.Result) != want {
		t.Errorf("modern tools/call result\n%s\nwant\n%s", modernRes.Result, want)
	}
	// Scopes are the same: a 403 with the same challenge.
	r = servertest.ModernPost(e, tok, "tools/call", v, v, map[string]any{"name": "git_document_get", "arguments": map[string]any{"source_id": tn.Project}})
	if r.Status != 403 || !strings.Contains(r.Header.Get("WWW-Authenticate"), `scope="documents:read memory:read memory:write"`) {
		t.Errorf("modern call without the scope: %d %q", r.Status, r.Header.Get("WWW-Authenticate"))
	}
	// A header value in the base64 form is decoded before it is compared.
	r = e.Post(servertest.ModernBody("tools/call", v, call), "Authorization", "Bearer "+tok, "MCP-Protocol-Version", v,
		"Mcp-Method", "tools/call", "Mcp-Name", "=?base64?"+base64.StdEncoding.EncodeToString([]byte("memory_get"))+"?=")
	if r.Status != 200 {
		t.Errorf("base64 Mcp-Name: %d %s", r.Status, r.Raw)
	}

	refusals := []struct {
		name   string
		r      servertest.Reply
		status int
		code   float64
	}{
		{"header names another version", servertest.ModernPost(e, tok, "tools/list", v, "2025-06-18", nil), 400, mcp.CodeHeaderMismatch},
		{"no version header", e.Post(servertest.ModernBody("tools/list", v, nil), "Authorization", "Bearer "+tok, "Mcp-Method", "tools/list"), 400, mcp.CodeHeaderMismatch},
		{"no Mcp-Method", e.Post(servertest.ModernBody("tools/list", v, nil), "Authorization", "Bearer "+tok, "MCP-Protocol-Version", v), 400, mcp.CodeHeaderMismatch},
		{"Mcp-Method of another method", e.Post(servertest.ModernBody("tools/list", v, nil), "Authorization", "Bearer "+tok, "MCP-Protocol-Version", v, "Mcp-Method", "tools/call"), 400, mcp.CodeHeaderMismatch},
		{"no Mcp-Name", e.Post(servertest.ModernBody("tools/call", v, call), "Authorization", "Bearer "+tok, "MCP-Protocol-Version", v, "Mcp-Method", "tools/call"), 400, mcp.CodeHeaderMismatch},
		{"Mcp-Name of another tool", e.Post(servertest.ModernBody("tools/call", v, call), "Authorization", "Bearer "+tok, "MCP-Protocol-Version", v, "Mcp-Method", "tools/call", "Mcp-Name", "memory_put"), 400, mcp.CodeHeaderMismatch},
		{"_meta without the version", e.Post(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":{}}}}`,
			"Authorization", "Bearer "+tok, "MCP-Protocol-Version", v, "Mcp-Method", "tools/list"), 400, mcp.CodeInvalidParams},
		{"_meta without the capabilities", e.Post(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
			"Authorization", "Bearer "+tok, "MCP-Protocol-Version", v, "Mcp-Method", "tools/list"), 400, mcp.CodeInvalidParams},
		{"header mismatch before an unknown version", servertest.ModernPost(e, tok, "tools/list", "2099-01-01", v, nil), 400, mcp.CodeHeaderMismatch},
		{"unknown method", servertest.ModernPost(e, tok, "resources/subscribe", v, v, nil), 404, mcp.CodeMethodNotFound},
		{"ping is gone", servertest.ModernPost(e, tok, "ping", v, v, nil), 404, mcp.CodeMethodNotFound},
		{"initialize with modern _meta", servertest.ModernPost(e, tok, "initialize", v, v, nil), 404, mcp.CodeMethodNotFound},
	}
	for _, tt := range refusals {
		if code, _ := servertest.RPCErrorOf(t, tt.r); tt.r.Status != tt.status || code != tt.code {
			t.Errorf("%s: HTTP %d code %v, want %d %v: %s", tt.name, tt.r.Status, code, tt.status, tt.code, tt.r.Raw)
		}
	}
	// Multi-round-trip params: no tool asks for input, so inputResponses is
	// ignored and any requestState is one this server never issued.
	r = servertest.ModernPost(e, tok, "tools/call", v, v, map[string]any{"name": "memory_get", "arguments": map[string]any{"key": "k"},
		"inputResponses": map[string]any{"extra": map[string]any{"action": "accept"}}})
	json.Unmarshal(r.Raw, &modernRes)
	if want := `{"resultType":"complete",` + string(legacyRes.Result[1:]); r.Status != 200 || string(modernRes.Result) != want {
		t.Errorf("tools/call with inputResponses: %d %s", r.Status, r.Raw)
	}
	r = servertest.ModernPost(e, tok, "tools/call", v, v, map[string]any{"name": "memory_get", "arguments": map[string]any{"key": "k"},
		"requestState": "eyJzdGVwIjoxfQ"})
	if code, _ := servertest.RPCErrorOf(t, r); code != mcp.CodeInvalidParams || !strings.Contains(string(r.Raw), "requestState") {
		t.Errorf("tools/call with a requestState: %d %s", r.Status, r.Raw)
	}

	r = servertest.ModernPost(e, tok, "tools/list", "2027-01-01", "2027-01-01", nil)
	code, data := servertest.RPCErrorOf(t, r)
	if r.Status != 400 || code != mcp.CodeUnsupportedProtocol || data["requested"] != "2027-01-01" || len(data["supported"].([]any)) != 5 {
		t.Errorf("unsupported version: %d %s", r.Status, r.Raw)
	}
}

// TestClaudeCode92835NewerHeaderAfterInitialize pins a deliberate deviation
// (anthropics/claude-code#92835): a client that sent initialize, accepted
// 2025-11-25, then sends MCP-Protocol-Version: 2026-07-28 on later legacy
// requests is served as 2025-11-25. A header naming no revision at all is
// still refused.
func TestClaudeCode92835NewerHeaderAfterInitialize(t *testing.T) {
	t.Parallel()
	e := servertest.New(t)
	tn := e.NewTenant("o", "r")
	tok := e.Token(tn, "memory:read")
	init := e.Post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2026-07-28","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
		"Authorization", "Bearer "+tok)
	if res, _ := init.Body["result"].(map[string]any); init.Status != 200 || res["protocolVersion"] != "2025-11-25" {
		t.Fatalf("initialize: %d %s", init.Status, init.Raw)
	}
	r := e.Post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"memory_list","arguments":{}}}`,
		"Authorization", "Bearer "+tok, "MCP-Protocol-Version", "2026-07-28")
	if res, _ := r.Body["result"].(map[string]any); r.Status != 200 || res["isError"] == true || res["resultType"] != nil {
		t.Errorf("legacy call with a 2026-07-28 header: %d %s", r.Status, r.Raw)
	}
	r = e.Post(`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`, "Authorization", "Bearer "+tok, "MCP-Protocol-Version", "2099-01-01")
	if r.Status != http.StatusBadRequest {
		t.Errorf("legacy call with an unknown version header: %d %s", r.Status, r.Raw)
	}
}

// TestClaudeCode93290ModernMetaWithLegacyHeader pins a deliberate deviation
// (anthropics/claude-code#93290): claude.ai connectors send a 2026-07-28
// _meta with MCP-Protocol-Version: 2025-11-25. That one pair is served as
// 2026-07-28; any other disagreement is -32020.
func TestClaudeCode93290ModernMetaWithLegacyHeader(t *testing.T) {
	t.Parallel()
	e := servertest.New(t)
	tn := e.NewTenant("o", "r")
	tok := e.Token(tn, "memory:read")
	r := servertest.ModernPost(e, tok, "tools/call", "2026-07-28", "2025-11-25", map[string]any{"name": "memory_list", "arguments": map[string]any{}})
	if res, _ := r.Body["result"].(map[string]any); r.Status != 200 || res["resultType"] != "complete" {
		t.Errorf("the connector's pair: %d %s", r.Status, r.Raw)
	}
	r = servertest.ModernPost(e, tok, "tools/list", "2026-07-28", "2025-03-26", nil)
	if code, _ := servertest.RPCErrorOf(t, r); r.Status != 400 || code != mcp.CodeHeaderMismatch {
		t.Errorf("another pair: %d %s", r.Status, r.Raw)
	}
}
