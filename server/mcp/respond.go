package mcp

import (
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"strconv"
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

// HandleMethodNotAllowed answers GET and DELETE: this server opens no
// streams and issues no sessions.
func HandleMethodNotAllowed() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", "POST")
		writeRPCError(w, http.StatusMethodNotAllowed, nil, &rpcError{CodeInvalidRequest, "method not allowed: use POST"})
	})
}
