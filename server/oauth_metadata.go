package server

import (
	"net/http"

	"heyaira/oauth"
)

// handleAuthServerMetadata serves RFC 8414 authorization-server metadata.
// The document is built once from cfg.PublicURL, so the issuer is exactly
// the PRM's authorization_servers[0], and no request header (Host,
// X-Forwarded-Host) can change an endpoint (OA-16).
func handleAuthServerMetadata(cfg *Config) http.Handler {
	doc := oauth.NewServerMetadata(cfg.PublicURL)
	// With CIMD on, Claude, Codex and VS Code use it: they look for this
	// flag and for "none" among the token endpoint's methods, which is
	// always listed.
	doc.ClientIDMetadataDocumentSupported = cfg.CIMD != nil
	return withPublicCORS(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, doc)
	}))
}
