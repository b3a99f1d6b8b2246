// Package mcp is the MCP resource server: POST /mcp over stateless
// Streamable HTTP, the strict JSON-RPC parse and the protocol eras, the
// bearer check (a token's MAC before the body is read, then the database),
// the scope check and its step-up challenge, the per-principal tool limit,
// and the tool table with its typed, strictly decoded arguments. The tools
// themselves are defined by the server package and handed to NewToolTable;
// this package knows none of them, and imports neither the tools nor the
// authorization server.
package mcp
