// Package tools holds HeyAira's MCP tools: memory, tasks, the allowlisted
// GitHub documents (runtime_bootstrap_get, git_document_get, with the read's
// authorization and audit), and the catalog and workflows. It also owns
// GitHub fairness: the requests in flight per server, project and
// principal, and each project's pace. The tools are mcp.Tool values, built
// by New for the MCP endpoint's tool table; this package imports neither the
// endpoint's transport nor the authorization server.
package tools
