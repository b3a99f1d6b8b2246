package authserver

import (
	"net/http"

	"heyaira/oauth"
	"heyaira/server/internal/web"
)

// HandleMetadata serves RFC 8414 authorization-server metadata,
// built once from cfg.PublicURL, so the issuer is exactly the PRM's
// authorization_servers[0], and no request header (Host, X-Forwarded-Host)
// can change an endpoint (OA-16).
func HandleMetadata(cfg *Config) http.Handler {
	doc := oauth.NewServerMetadata(cfg.PublicURL)
	// Claude, Codex and VS Code use CIMD when they see this flag and "none"
	// among the token endpoint's methods (always listed).
	doc.ClientIDMetadataDocumentSupported = cfg.CIMD != nil
	return web.PublicDocument(doc)
}
