package mcp

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"heyaira/server/internal/web"
)

// maxMCPBody bounds every /mcp request body.
const maxMCPBody = 1 << 20

// latestVersion is answered to clients that ask for a version we do not speak.
const latestVersion = "2025-11-25"

// supportedVersions are the MCP revisions this server accepts.
var supportedVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// handleMCP serves MCP over stateless Streamable HTTP: one JSON-RPC message per
// POST, one JSON response (or 202 for notifications), no sessions.
//
// Check order: bearer header and the token's MAC (401 before the body is
// read) → body limit → Content-Type → strict decode → the era's
// protocol-version and header rules (modern.go) → authentication from the
// database (authn.go) → dispatch.
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
		var call toolCall
		var callErr error
		if msg.Method == "tools/call" && msg.ID != nil {
			call, callErr = tools.parseCall(msg.Params)
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
			err = callErr
			if callErr == nil {
				result, err = tools.call(r.Context(), who, call)
			}
			if modern {
				result = withResultType(result)
			}
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

// dispatch answers one JSON-RPC request other than tools/call.
func dispatch(tools *ToolTable, cfg *Config, msg rpcMessage) (any, error) {
	switch msg.Method {
	case "initialize":
		return initialize(msg.Params, cfg)
	case "ping":
		return struct{}{}, nil
	case "tools/list":
		return map[string]any{"tools": tools.list()}, nil
	case "resources/list":
		return map[string]any{"resources": []any{}}, nil
	case "resources/templates/list":
		return map[string]any{"resourceTemplates": []any{}}, nil
	case "prompts/list":
		return map[string]any{"prompts": []any{}}, nil
	default:
		return nil, &rpcError{CodeMethodNotFound, "method not found: " + web.Quote(msg.Method)}
	}
}

// wantsSSE reports whether the client accepts only an event stream. Accept is
// read leniently: missing, */*, application/* or application/json mean JSON.
func wantsSSE(accept string) bool {
	plain, sse := false, false
	for _, part := range strings.Split(accept, ",") {
		mt, _, _ := mime.ParseMediaType(strings.TrimSpace(part))
		switch mt {
		case "application/json", "application/*", "*/*":
			plain = true
		case "text/event-stream":
			sse = true
		}
	}
	return sse && !plain
}

func writeRPCResponse(w http.ResponseWriter, sse bool, v any) {
	r, _ := v.(rpcResponse)
	if pre, ok := r.Result.(encodedResult); ok && !sse {
		// The id was validated by parseMessage and the result encoded by
		// toolResult: both are JSON already.
		const head, mid = `{"jsonrpc":"2.0","id":`, `,"result":`
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		// With its length known, a large result is sent as it is,
		// without chunked framing.
		w.Header().Set("Content-Length", strconv.Itoa(len(head)+len(r.ID)+len(mid)+len(pre)+1))
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, head)
		w.Write(r.ID)
		io.WriteString(w, mid)
		w.Write(pre)
		io.WriteString(w, "}")
		return
	}
	if !sse {
		web.WriteJSON(w, http.StatusOK, v)
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	io.WriteString(w, "event: message\ndata: ")
	w.Write(b)
	io.WriteString(w, "\n\n")
}

func writeRPCError(w http.ResponseWriter, status int, id json.RawMessage, e *rpcError) {
	web.WriteJSON(w, status, rpcErrorResponse{JSONRPC: "2.0", ID: id, Error: e})
}

// handleMCPMethodNotAllowed answers GET and DELETE: this server opens no
// streams and issues no sessions.
func HandleMethodNotAllowed() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", "POST")
		writeRPCError(w, http.StatusMethodNotAllowed, nil, &rpcError{CodeInvalidRequest, "method not allowed: use POST"})
	})
}
