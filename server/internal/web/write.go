package web

import (
	"encoding/json"
	"net/http"
	"strconv"
)

// WriteJSON is the one place that writes a JSON response. Headers are set
// before WriteHeader, or they would be lost.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	// With its length known, a large answer is sent as it is, without
	// chunked framing.
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	w.Write(b)
}

// PublicDocument serves a fixed JSON document that browser-based clients
// may read from any origin.
func PublicDocument(doc any) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", "*")
		if r.Method == http.MethodOptions {
			w.Header().Set("Access-Control-Allow-Methods", "GET, OPTIONS")
			w.Header().Set("Access-Control-Allow-Headers", "MCP-Protocol-Version, Content-Type")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		WriteJSON(w, http.StatusOK, doc)
	})
}
