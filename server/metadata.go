package server

import (
	"net/http"

	"heyaira/oauth"
)

// handleResourceMetadata serves RFC 9728 protected-resource metadata, built
// from configuration only (never from request headers, which an attacker
// controls). resource is the exact identifier tokens are bound to.
func handleResourceMetadata(cfg *Config, resource string) http.Handler {
	doc := map[string]any{
		"resource":                 resource,
		"authorization_servers":    []string{cfg.PublicURL},
		"scopes_supported":         oauth.Supported,
		"bearer_methods_supported": []string{"header"},
		"resource_name":            "HeyAira F1",
	}
	return withPublicCORS(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, doc)
	}))
}

// withPublicCORS lets browser-based clients read public metadata documents.
func withPublicCORS(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", "*")
		if r.Method == http.MethodOptions {
			w.Header().Set("Access-Control-Allow-Methods", "GET, OPTIONS")
			w.Header().Set("Access-Control-Allow-Headers", "MCP-Protocol-Version, Content-Type")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		next.ServeHTTP(w, r)
	})
}
