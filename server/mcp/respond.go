package mcp

import (
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"strings"

	"heyaira/server/internal/web"
)

// dispatch answers one JSON-RPC request other than tools/call.
func dispatch(tools *ToolTable, cfg *Config, msg rpcMessage) (any, error) {
	switch msg.Method {
	case "initialize":
		return initialize(msg.Params, cfg)
	case "ping":
		return struct{}{}, nil
	case "tools/list":
		return map[string]any{"tools": tools.list()}, nil
	case "resources/templates/list":
		return resourceTemplates(), nil
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

// HandleMethodNotAllowed answers GET and DELETE: this server opens no
// streams and issues no sessions.
func HandleMethodNotAllowed() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", "POST")
		writeRPCError(w, http.StatusMethodNotAllowed, nil, &rpcError{CodeInvalidRequest, "method not allowed: use POST"})
	})
}
