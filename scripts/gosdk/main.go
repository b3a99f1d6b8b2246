// Command gosdk is a real-client test peer: the official MCP Go SDK client
// against a running HeyAira. It lives in its own module so that the SDK
// never enters HeyAira's go.mod; interop_gosdk_test.go runs it.
//
// It takes one JSON argument {"url","token","source_id","mode"} (mode
// "default" lets the SDK probe server/discover; "legacy" forces initialize
// with 2025-11-25), connects with the bearer token, lists the tools, puts
// and gets a memory entry and reads the document, and prints one JSON line
// of what it saw.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type input struct {
	URL      string `json:"url"`
	Token    string `json:"token"`
	SourceID string `json:"source_id"`
	Mode     string `json:"mode"`
}

type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "gosdk:", err)
		os.Exit(1)
	}
}

func run() error {
	var in input
	if len(os.Args) != 2 || json.Unmarshal([]byte(os.Args[1]), &in) != nil {
		return fmt.Errorf("usage: gosdk '{\"url\":…,\"token\":…,\"source_id\":…,\"mode\":\"default|legacy\"}'")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "heyaira-interop", Version: "1"}, nil)
	transport := &mcp.StreamableClientTransport{Endpoint: in.URL, HTTPClient: &http.Client{Transport: bearer{in.Token}},
		DisableStandaloneSSE: true, MaxRetries: -1}
	var opts *mcp.ClientSessionOptions
	if in.Mode == "legacy" {
		opts = &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}
	}
	cs, err := client.Connect(ctx, transport, opts)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer cs.Close()
	out := map[string]any{"protocolVersion": cs.InitializeResult().ProtocolVersion}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		return fmt.Errorf("tools/list: %w", err)
	}
	var names []string
	for _, t := range tools.Tools {
		names = append(names, t.Name)
	}
	out["tools"] = names
	calls := []struct {
		key, name string
		args      map[string]any
	}{
		{"memoryPut", "memory_put", map[string]any{"key": "gosdk/" + in.Mode, "content": "from the Go SDK é"}},
		{"memoryGet", "memory_get", map[string]any{"key": "gosdk/" + in.Mode}},
		{"document", "git_document_get", map[string]any{"source_id": in.SourceID}},
	}
	for _, c := range calls {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.name, Arguments: c.args})
		if err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
		out[c.key] = map[string]any{"isError": res.IsError, "structuredContent": res.StructuredContent}
	}
	return json.NewEncoder(os.Stdout).Encode(out)
}
