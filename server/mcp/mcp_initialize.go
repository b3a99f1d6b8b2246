package mcp

import (
	"encoding/json"
	"slices"
)

// The initialize handshake of the 2025 eras: the version negotiation and
// what the server says of itself.

// latestVersion is answered to clients that ask for a version we do not speak.
const latestVersion = "2025-11-25"

// supportedVersions are the MCP revisions this server accepts.
var supportedVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// initialize negotiates the protocol version: a supported requested version
// is echoed; anything else gets our latest (never an error, per the spec).
func initialize(params json.RawMessage, cfg *Config) (any, error) {
	var p struct {
		ProtocolVersion json.RawMessage `json:"protocolVersion"`
	}
	if len(params) > 0 {
		// Clients send capabilities and clientInfo we do not need; only the version matters.
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, &rpcError{CodeInvalidParams, "invalid initialize params"}
		}
	}
	version := latestVersion
	var requested string
	if json.Unmarshal(p.ProtocolVersion, &requested) == nil && slices.Contains(supportedVersions, requested) {
		version = requested
	}
	return map[string]any{
		"protocolVersion": version,
		"capabilities":    capabilities,
		"serverInfo":      serverInfo(cfg),
		"instructions":    instructions,
	}, nil
}

func serverInfo(cfg *Config) map[string]any {
	return map[string]any{"name": "heyaira", "title": "HeyAira F1", "version": cfg.Version}
}

const instructions = "HeyAira keeps project memory and tasks and reads administrator-allowlisted " +
	"GitHub documents at pinned commits. Call runtime_bootstrap_get first, then git_document_get " +
	"with a source_id; follow next_cursor until it is absent."
