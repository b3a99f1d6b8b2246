package mcp

import (
	"context"
	"net/http"
)

// Resources, prompts and completions are served by tools whose Method is
// set: the request's params are the tool's arguments, decoded strictly once
// the bearer is checked, and the call runs the path of a tools/call (scope,
// the principal's limit, logging, metrics). A failure is a JSON-RPC error
// whose data is what a tool error's structuredContent.error would be: the
// stable code, the public message and any fields.

// ResourceTemplate is the one resource template (resources/templates/list):
// the tools' resources/read accepts exactly its expansions.
const ResourceTemplate = "heyaira://sources/{source_id}"

// method answers msg with the tool of its method.
func (tt *ToolTable) method(ctx context.Context, who Principal, msg rpcMessage, modern bool) (any, error) {
	t := tt.methods[msg.Method]
	result, failure, err := tt.serve(ctx, who, t.callWith(msg.Params))
	switch {
	case err != nil:
		return nil, err
	case failure != nil:
		return nil, &modernError{status: http.StatusOK, Code: methodErrorCode(failure["code"].(string), modern),
			Msg: failure["message"].(string), Data: failure}
	}
	if r, ok := result.(map[string]any); ok && modern {
		// private: what a caller may see depends on its token.
		r["resultType"], r["ttlMs"], r["cacheScope"] = "complete", t.TTL, "private"
	}
	return result, nil
}

// methodErrorCode is the JSON-RPC code of a method's failure: a resource
// that is not there is -32002 until 2025-11-25 and -32602 since 2026-07-28;
// a refused argument or cursor is -32602; anything else -32603, its stable
// code in data.
func methodErrorCode(code string, modern bool) int {
	switch code {
	case "source_not_found":
		if !modern {
			return CodeResourceNotFound
		}
		return CodeInvalidParams
	case "invalid_argument", "cursor_invalid", "cursor_expired", "profile_not_found":
		return CodeInvalidParams
	}
	return CodeInternalError
}

// CodeResourceNotFound is MCP's resource-not-found error before 2026-07-28.
const CodeResourceNotFound = -32002

func (e *modernError) Error() string { return e.Msg }

// resourceTemplates is the answer of resources/templates/list: the template
// names only what resources/list lists, so it needs no scope of its own.
func resourceTemplates() map[string]any {
	return map[string]any{"resourceTemplates": []map[string]any{{"uriTemplate": ResourceTemplate,
		"name": "document_source", "title": "An allowlisted document, by source_id",
		"description": "A document the project's administrator allowlisted, at its pinned commit; " +
			"completion offers the source_ids resources/list lists."}}}
}

// capabilities is what the server offers, in both eras.
var capabilities = map[string]any{"tools": map[string]any{"listChanged": false}, "resources": map[string]any{},
	"prompts": map[string]any{}, "completions": map[string]any{}}
