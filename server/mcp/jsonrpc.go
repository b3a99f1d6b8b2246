package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"

	"heyaira/server/internal/web"
)

// Standard JSON-RPC 2.0 error codes (https://www.jsonrpc.org/specification#error_object).
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
)

// rpcError is a JSON-RPC error object. Is compares codes only.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *rpcError) Error() string { return e.Message }

func (e *rpcError) Is(target error) bool {
	t, ok := target.(*rpcError)
	return ok && t.Code == e.Code
}

// rpcMessage is one decoded client message: a request (ID set), a
// notification (no ID) or a response to a server request (which we never send).
type rpcMessage struct {
	ID         json.RawMessage // nil for a notification; a string or number otherwise
	Method     string
	Params     json.RawMessage
	IsResponse bool
}

// envelopeKeys is the exact set of keys a client message may carry.
var envelopeKeys = []string{"jsonrpc", "id", "method", "params", "result", "error"}

// parseMessage decodes one JSON-RPC message strictly: a single object, exact
// keys, no duplicates, version "2.0", an id that is a string or a number.
// The returned rpcMessage.ID is valid whenever it could be read, so an error
// response can echo it.
func parseMessage(body []byte) (rpcMessage, *rpcError) {
	var m rpcMessage
	if bytes.HasPrefix(bytes.TrimLeft(body, " \t\r\n"), []byte("[")) {
		return m, &rpcError{CodeInvalidRequest, "batch requests are not supported"}
	}
	if err := web.CheckJSON(body); err != nil {
		if errors.Is(err, web.ErrDuplicateKey) || errors.Is(err, web.ErrTrailingData) || errors.Is(err, web.ErrTooDeep) {
			return m, &rpcError{CodeInvalidRequest, "invalid request: " + err.Error()}
		}
		return m, &rpcError{CodeParseError, "parse error: invalid JSON"}
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil {
		return m, &rpcError{CodeInvalidRequest, "invalid request: not a JSON object"}
	}
	if id, ok := raw["id"]; ok && isIDValue(id) {
		m.ID = id
	}
	for k := range raw {
		if !slices.Contains(envelopeKeys, k) {
			return m, &rpcError{CodeInvalidRequest, "invalid request: unknown member " + web.Quote(k)}
		}
	}
	if string(raw["jsonrpc"]) != `"2.0"` {
		return m, &rpcError{CodeInvalidRequest, `invalid request: jsonrpc must be "2.0"`}
	}
	if id, ok := raw["id"]; ok && !isIDValue(id) {
		return m, &rpcError{CodeInvalidRequest, "invalid request: id must be a string or a number"}
	}
	_, hasResult := raw["result"]
	_, hasError := raw["error"]
	method, hasMethod := raw["method"]
	switch {
	case hasResult || hasError:
		if hasMethod || (hasResult && hasError) || m.ID == nil {
			return m, &rpcError{CodeInvalidRequest, "invalid request: malformed response"}
		}
		m.IsResponse = true
		return m, nil
	case !hasMethod:
		return m, &rpcError{CodeInvalidRequest, "invalid request: method is required"}
	}
	if err := json.Unmarshal(method, &m.Method); err != nil || m.Method == "" {
		return m, &rpcError{CodeInvalidRequest, "invalid request: method must be a non-empty string"}
	}
	if p, ok := raw["params"]; ok {
		if len(p) == 0 || p[0] != '{' {
			// tools/call names a tool and its arguments in params: anything
			// else there is the call's invalid params, as MCP clients expect.
			if m.Method == "tools/call" {
				return m, &rpcError{CodeInvalidParams, "invalid params: tools/call params must be an object"}
			}
			return m, &rpcError{CodeInvalidRequest, "invalid request: params must be an object"}
		}
		m.Params = p
	}
	return m, nil
}

// isIDValue reports whether raw is a JSON string or number (never null).
func isIDValue(raw json.RawMessage) bool {
	if len(raw) == 0 {
		return false
	}
	c := raw[0]
	return c == '"' || c == '-' || (c >= '0' && c <= '9')
}

// rpcResponse is a success; rpcErrorResponse is a failure. They are separate
// types so that a response never carries both "result" and "error", nor
// "error": null, which strict clients reject.
type rpcResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result"`
}

type rpcErrorResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"` // omitted when the id could not be read
	Error   any             `json:"error"`        // an *rpcError, or a *modernError (modern.go)
}
