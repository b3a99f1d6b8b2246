package mcp

import (
	"net/http"

	"heyaira/oauth"
	"heyaira/server/internal/web"
)

// HandleResourceMetadata serves RFC 9728 protected-resource metadata, built
// from configuration only (never from request headers, which an attacker
// controls). resource is the exact identifier tokens are bound to.
func HandleResourceMetadata(cfg *Config, resource string) http.Handler {
	return web.PublicDocument(map[string]any{
		"resource":                 resource,
		"authorization_servers":    []string{cfg.PublicURL},
		"scopes_supported":         oauth.Supported,
		"bearer_methods_supported": []string{"header"},
		"resource_name":            "HeyAira F1",
	})
}
