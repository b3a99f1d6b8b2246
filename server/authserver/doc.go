// Package authserver is HeyAira's OAuth 2.1 authorization server: dynamic
// client registration, client ID metadata documents (CIMD, the binary's one
// outbound HTTPS besides GitHub), the authorization and consent pages, the
// token and revocation endpoints, and sign-in by one-time link. Every secret
// it accepts is checked against its MAC before any lookup (oauth.Secrets).
//
// It imports neither the MCP endpoint nor the tools: the compiler proves
// that nothing here reads a tool's state or answers /mcp, and the server
// package mounts its handlers in the one route table.
package authserver
