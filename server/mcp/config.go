package mcp

import (
	"time"

	"heyaira/oauth"
)

// Config is what the MCP endpoint reads of the server's configuration.
type Config struct {
	// PublicURL is the external base URL; the MCP resource is PublicURL + "/mcp".
	PublicURL string
	// AllowedOrigins are the Origin values /mcp accepts besides PublicURL's own.
	AllowedOrigins []string
	// Version is reported in serverInfo.
	Version string
	// Now is the clock.
	Now func() time.Time
	// Secrets recognises the bearer tokens the server minted.
	Secrets *oauth.Secrets
}

// resource is the MCP resource identifier: the audience every token must carry.
func (c *Config) resource() string { return c.PublicURL + "/mcp" }

// resourceMetadataURL is where RFC 9728 metadata for the MCP resource lives.
func (c *Config) resourceMetadataURL() string {
	return c.PublicURL + "/.well-known/oauth-protected-resource/mcp"
}
