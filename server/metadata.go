package server

import (
	"net/http"

	"heyaira/oauth"
	"heyaira/server/internal/web"
)

// handleResourceMetadata serves RFC 9728 protected-resource metadata, built
// from configuration only (never from request headers, which an attacker
// controls). resource is the exact identifier tokens are bound to.
func handleResourceMetadata(cfg *Config, resource string) http.Handler {
	return publicDocument(map[string]any{
		"resource":                 resource,
		"authorization_servers":    []string{cfg.PublicURL},
		"scopes_supported":         oauth.Supported,
		"bearer_methods_supported": []string{"header"},
		"resource_name":            "HeyAira F1",
	})
}

// handleAuthServerMetadata serves RFC 8414 authorization-server metadata,
// built once from cfg.PublicURL, so the issuer is exactly the PRM's
// authorization_servers[0], and no request header (Host, X-Forwarded-Host)
// can change an endpoint (OA-16).
func handleAuthServerMetadata(cfg *Config) http.Handler {
	doc := oauth.NewServerMetadata(cfg.PublicURL)
	// Claude, Codex and VS Code use CIMD when they see this flag and "none"
	// among the token endpoint's methods (always listed).
	doc.ClientIDMetadataDocumentSupported = cfg.CIMD != nil
	return publicDocument(doc)
}

// publicDocument serves a fixed JSON document that browser-based clients
// may read from any origin.
func publicDocument(doc any) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", "*")
		if r.Method == http.MethodOptions {
			w.Header().Set("Access-Control-Allow-Methods", "GET, OPTIONS")
			w.Header().Set("Access-Control-Allow-Headers", "MCP-Protocol-Version, Content-Type")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		web.WriteJSON(w, http.StatusOK, doc)
	})
}
