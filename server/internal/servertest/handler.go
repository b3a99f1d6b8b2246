package servertest

import (
	"bytes"
	"time"

	"heyaira/oauth"
	"heyaira/server/mcp"
)

// HandlerSecrets are the secrets of an MCP handler tested without NewServer.
func HandlerSecrets() *oauth.Secrets { return oauth.NewSecrets([][]byte{bytes.Repeat([]byte{5}, 32)}) }

// MCPConfig is the MCP endpoint's configuration for a handler tested
// without NewServer, at http://127.0.0.1.
func MCPConfig(secrets *oauth.Secrets) *mcp.Config {
	return &mcp.Config{PublicURL: "http://127.0.0.1", Version: "test", Now: time.Now, Secrets: secrets}
}
