package mcp

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"slices"
	"strings"

	"heyaira/server/internal/web"
)

// MCP 2026-07-28 (the "modern" era) is stateless: no initialize, and every
// request names its protocol version in params._meta and repeats it, with
// the method (and for tools/call the tool), in headers. A request that
// carries a modern _meta version is served under those rules; any other is
// the legacy era (initialize, 2024-11-05 … 2025-11-25). Authorization, scopes
// and tools are the same in both: only the envelope differs.

// modernVersions are the modern-era revisions this server speaks.
var modernVersions = []string{"2026-07-28"}

// allVersions is every revision served, newest first.
var allVersions = slices.Concat(modernVersions, supportedVersions)

const (
	CodeHeaderMismatch      = -32020
	CodeUnsupportedProtocol = -32022
	MetaProtocolVersion     = "io.modelcontextprotocol/protocolVersion"
	metaClientCapabilities  = "io.modelcontextprotocol/clientCapabilities"
	// toolsListTTL is how long a client may keep tools/list (ttlMs). The
	// list is fixed for a running server.
	toolsListTTL = 5 * 60 * 1000
)

// modernError is a JSON-RPC error of the modern era with its HTTP status and
// data.
type modernError struct {
	status int
	Code   int    `json:"code"`
	Msg    string `json:"message"`
	Data   any    `json:"data,omitempty"`
}

// modernMeta reads params._meta: modern is whether it carries any of the
// modern era's keys (the protocol version or the client capabilities);
// version is the protocol version, "" when absent or not a string; caps is
// whether the client capabilities are present.
func modernMeta(params json.RawMessage) (version string, caps, modern bool) {
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if len(params) == 0 || json.Unmarshal(params, &p) != nil {
		return "", false, false
	}
	raw, hasVersion := p.Meta[MetaProtocolVersion]
	_, caps = p.Meta[metaClientCapabilities]
	json.Unmarshal(raw, &version) // absent (nil) or not a string: version stays ""
	return version, caps, hasVersion || caps
}

// checkModern applies the modern era's rules to a request whose _meta names
// version (caps: whether it names the client capabilities). It returns nil
// when the request is to be served.
func checkModern(r *http.Request, msg rpcMessage, version string, caps bool) *modernError {
	invalid := func(what string) *modernError {
		return &modernError{status: http.StatusBadRequest, Code: CodeInvalidParams, Msg: "invalid params: " + what}
	}
	mismatch := func(what string) *modernError {
		return &modernError{status: http.StatusBadRequest, Code: CodeHeaderMismatch, Msg: "header mismatch: " + what}
	}
	switch {
	case version == "":
		return invalid("_meta must name the protocol version")
	case !caps:
		return invalid("_meta must carry the client capabilities")
	}
	h := r.Header.Get("MCP-Protocol-Version")
	// Deliberate deviation (claude-code#93290): claude.ai connectors send a
	// 2026-07-28 _meta with a 2025-11-25 header. The body is what the client
	// negotiated, so that one pair is served as 2026-07-28.
	if h != version && !(version == "2026-07-28" && h == "2025-11-25") {
		return mismatch("MCP-Protocol-Version must equal the _meta protocol version")
	}
	if !slices.Contains(modernVersions, version) {
		return &modernError{status: http.StatusBadRequest, Code: CodeUnsupportedProtocol,
			Msg:  "unsupported protocol version",
			Data: map[string]any{"supported": allVersions, "requested": version}}
	}
	if headerValue(r.Header.Get("Mcp-Method")) != msg.Method {
		return mismatch("Mcp-Method must equal the request's method")
	}
	// Mcp-Name mirrors the name a request acts on: a tool's or a prompt's
	// name, or the URI of the resource read.
	if field, ok := map[string]string{"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}[msg.Method]; ok {
		var p map[string]json.RawMessage
		var name string
		json.Unmarshal(msg.Params, &p)
		json.Unmarshal(p[field], &name)
		if n := r.Header.Get("Mcp-Name"); n == "" || headerValue(n) != name {
			return mismatch("Mcp-Name must equal params." + field)
		}
	}
	return nil
}

// headerValue decodes the =?base64?…?= form clients use for values that are
// not safe in a header.
func headerValue(v string) string {
	if s, ok := strings.CutPrefix(v, "=?base64?"); ok {
		if s, ok = strings.CutSuffix(s, "?="); ok {
			if b, err := base64.StdEncoding.DecodeString(s); err == nil {
				return string(b)
			}
		}
	}
	return v
}

// dispatchModern answers a modern-era request other than tools/call.
func dispatchModern(tools *ToolTable, cfg *Config, msg rpcMessage) (any, *modernError) {
	switch msg.Method {
	case "server/discover":
		return map[string]any{
			"resultType":        "complete",
			"supportedVersions": allVersions,
			"capabilities":      capabilities,
			"instructions":      instructions,
			"ttlMs":             toolsListTTL,
			"cacheScope":        "private",
			"_meta":             map[string]any{"io.modelcontextprotocol/serverInfo": serverInfo(cfg)},
		}, nil
	case "tools/list":
		// private: what a caller may call depends on its token.
		return map[string]any{"resultType": "complete", "tools": tools.list(), "ttlMs": toolsListTTL, "cacheScope": "private"}, nil
	case "resources/templates/list":
		r := resourceTemplates()
		r["resultType"], r["ttlMs"], r["cacheScope"] = "complete", toolsListTTL, "private"
		return r, nil
	}
	return nil, &modernError{status: http.StatusNotFound, Code: CodeMethodNotFound, Msg: "method not found: " + web.Quote(msg.Method)}
}

func writeModernError(w http.ResponseWriter, id json.RawMessage, e *modernError) {
	web.WriteJSON(w, e.status, rpcErrorResponse{JSONRPC: "2.0", ID: id, Error: e})
}
