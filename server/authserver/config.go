package authserver

import (
	"time"

	"heyaira/oauth"
)

// Config is what the authorization server reads of the server's
// configuration.
type Config struct {
	// PublicURL is the issuer; the MCP resource is PublicURL + "/mcp".
	PublicURL string
	// Now is the clock.
	Now func() time.Time
	// CIMD resolves client ID metadata documents; nil means off.
	CIMD *CIMD
	// Secrets mints and recognises every secret the server issues.
	Secrets *oauth.Secrets
}

// resource is the MCP resource identifier: the audience every token carries.
func (c *Config) resource() string { return c.PublicURL + "/mcp" }
