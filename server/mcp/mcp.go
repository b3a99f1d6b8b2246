package mcp

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"slices"
	"strings"

	"heyaira/server/internal/web"
)

// maxMCPBody bounds every /mcp request body.
const maxMCPBody = 1 << 20

// HandleMCP serves MCP over stateless Streamable HTTP: one JSON-RPC message per
// POST, one JSON response (or 202 for notifications), no sessions.
//
// Check order: bearer header and the token's MAC (401 before the body is
// read) → body limit → Content-Type → strict decode → the era's
// protocol-version and header rules (modern.go) → authentication from the
// database (authn.go) → the params' decoding → dispatch.
func HandleMCP(logger *slog.Logger, tools *ToolTable, cfg *Config, authn Authenticator) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tokenHash, ok := bearerHash(w, r, cfg)
		if !ok {
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxMCPBody)
		if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
			writeRPCError(w, http.StatusUnsupportedMediaType, nil, &rpcError{CodeInvalidRequest, "Content-Type must be application/json"})
			return
		}
		sse := wantsSSE(r.Header.Get("Accept"))
		body, err := io.ReadAll(r.Body)
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				writeRPCError(w, http.StatusRequestEntityTooLarge, nil, &rpcError{CodeInvalidRequest, "request body exceeds 1 MiB"})
				return
			}
			writeRPCError(w, http.StatusBadRequest, nil, &rpcError{CodeParseError, "could not read request body"})
			return
		}
		msg, rerr := parseMessage(body)
		if rerr != nil {
			writeRPCError(w, http.StatusBadRequest, msg.ID, rerr)
			return
		}
		version, caps, modern := modernMeta(msg.Params)
		modern = modern && msg.ID != nil && !msg.IsResponse
		if modern {
			if merr := checkModern(r, msg, version, caps); merr != nil {
				writeModernError(w, msg.ID, merr)
				return
			}
		} else if v := r.Header.Get("MCP-Protocol-Version"); v != "" && !slices.Contains(allVersions, v) {
			// Deliberate deviation (claude-code#92835): a legacy-era request
			// whose header names a newer revision than was negotiated (a
			// modern one) is served as the negotiated revision; this server
			// keeps no session, and the tools do not differ.
			writeRPCError(w, http.StatusBadRequest, nil, &rpcError{CodeInvalidRequest,
				"unsupported MCP-Protocol-Version; supported: " + strings.Join(allVersions, ", ")})
			return
		}
		who, ok := authorize(w, r, logger, cfg, authn, tokenHash)
		if !ok {
			return
		}
		web.AddLog(r.Context(), slog.String("rpc_method", msg.Method))
		if msg.IsResponse || msg.ID == nil {
			// Notifications and responses are accepted and need no answer.
			w.WriteHeader(http.StatusAccepted)
			return
		}
		var result any
		switch {
		case msg.Method == "tools/call":
			var call toolCall
			var res *callToolResult
			if call, err = tools.parseCall(msg.Params); err == nil {
				res, err = tools.call(r.Context(), who, call)
			}
			if res != nil && modern {
				res.ResultType = "complete"
			}
			result = res
		case tools.methods[msg.Method] != nil:
			result, err = tools.method(r.Context(), who, msg, modern)
		case modern:
			var merr *modernError
			if result, merr = dispatchModern(tools, cfg, msg); merr != nil {
				writeModernError(w, msg.ID, merr)
				return
			}
		default:
			result, err = dispatch(tools, cfg, msg)
		}
		var se *ScopeError
		switch {
		case errors.As(err, &se):
			writeInsufficientScope(w, cfg, se)
			return
		case errors.As(err, new(*modernError)):
			writeRPCResponse(w, sse, rpcErrorResponse{JSONRPC: "2.0", ID: msg.ID, Error: err})
			return
		case err != nil:
			var re *rpcError
			if !errors.As(err, &re) {
				logger.ErrorContext(r.Context(), "mcp dispatch failed", "req_id", web.RequestID(r.Context()), "err", err)
				re = &rpcError{CodeInternalError, "internal error (request " + web.RequestID(r.Context()) + ")"}
			}
			writeRPCResponse(w, sse, rpcErrorResponse{JSONRPC: "2.0", ID: msg.ID, Error: re})
			return
		}
		writeRPCResponse(w, sse, rpcResponse{JSONRPC: "2.0", ID: msg.ID, Result: result})
	})
}

func writeRPCError(w http.ResponseWriter, status int, id json.RawMessage, e *rpcError) {
	web.WriteJSON(w, status, rpcErrorResponse{JSONRPC: "2.0", ID: id, Error: e})
}
