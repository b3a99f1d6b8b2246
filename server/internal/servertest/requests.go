package servertest

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"heyaira/server"
	"heyaira/server/mcp"
	"heyaira/store"
	"heyaira/store/storetest"
)

// ModernBody is a 2026-07-28 request: the version in params._meta.
func ModernBody(method, version string, params map[string]any) string {
	if params == nil {
		params = map[string]any{}
	}
	params["_meta"] = map[string]any{mcp.MetaProtocolVersion: version,
		"io.modelcontextprotocol/clientCapabilities": map[string]any{}}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": method, "params": params})
	return string(b)
}

// ModernPost sends a modern request with the headers the era requires.
func ModernPost(e *Env, tok, method, version, header string, params map[string]any, extra ...string) Reply {
	e.T.Helper()
	h := []string{"Authorization", "Bearer " + tok, "MCP-Protocol-Version", header, "Mcp-Method", method}
	if name, ok := params["name"].(string); ok {
		h = append(h, "Mcp-Name", name)
	}
	if uri, ok := params["uri"].(string); ok {
		h = append(h, "Mcp-Name", uri)
	}
	return e.Post(ModernBody(method, version, params), append(h, extra...)...)
}

// RPCErrorOf is the JSON-RPC error code and data of r.
func RPCErrorOf(t *testing.T, r Reply) (float64, map[string]any) {
	t.Helper()
	errObj, _ := r.Body["error"].(map[string]any)
	code, _ := errObj["code"].(float64)
	data, _ := errObj["data"].(map[string]any)
	return code, data
}

// RPCOutcome classifies an /mcp reply: "ok", a tool error code,
// "store_unavailable" for the bearer's 503, or "http_<status>".
func RPCOutcome(r Reply) string {
	switch {
	case r.Status == 503 && strings.Contains(string(r.Raw), "store_unavailable"):
		return "store_unavailable"
	case r.Status != 200:
		return fmt.Sprintf("http_%d", r.Status)
	}
	res, _ := r.Body["result"].(map[string]any)
	if isErr, _ := res["isError"].(bool); isErr {
		sc, _ := res["structuredContent"].(map[string]any)
		e, _ := sc["error"].(map[string]any)
		code, _ := e["code"].(string)
		return code
	}
	if res == nil {
		return "jsonrpc_error"
	}
	return "ok"
}

// NewCounted is New whose store goes through a wire counter, so a
// test counts the statements each request sends to PostgreSQL.
func NewCounted(t *testing.T, mutate ...func(*server.Config)) (*Env, *storetest.WireCounter) {
	t.Helper()
	url := storetest.NewMigratedURL(t)
	wc := storetest.NewWireCounter(t, url)
	db, err := store.Open(t.Context(), wc.DSN(url))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return NewOn(t, db, nil, mutate...), wc
}
