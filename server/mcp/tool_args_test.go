package mcp_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"heyaira/server/mcp"
	"heyaira/server/tools"
)

// allTools is every tool of the server (the methods' included), with no dependencies behind them.
func allTools() []*mcp.Tool {
	var out []*mcp.Tool
	groups, _ := tools.New(nil, tools.Config{Now: time.Now, GitHubInFlight: 1, GitHubProjectShare: 1, GitHubPrincipalShare: 1,
		GitHubHourlyBudget: 1, Replicas: 1}, nil, nil, nil)
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

// TestToolArgumentsOneDeclaration holds every tool's published inputSchema
// equal to what its arguments' decoding accepts: each property the schema
// names is accepted (all at once), and nothing else is, not even the same
// name in another case. Required names are properties.
func TestToolArgumentsOneDeclaration(t *testing.T) {
	t.Parallel()
	tools := allTools()
	if n := len(slices.DeleteFunc(slices.Clone(tools), func(t *mcp.Tool) bool { return t.Method })); n != 14 {
		t.Fatalf("%d tools, want 14 (and the methods tools serve)", n)
	}
	for _, tl := range tools {
		s := tl.InputSchema()
		props := s["properties"].(map[string]any)
		if s["additionalProperties"] != false {
			t.Errorf("%s: additionalProperties = %v", tl.Name, s["additionalProperties"])
		}
		all := map[string]any{}
		for name := range props {
			all[name] = nil
		}
		raw, _ := json.Marshal(all)
		if _, err := tl.Decode(raw); err != nil {
			t.Errorf("%s: every schema property at once refused: %v", tl.Name, err)
		}
		for name := range props {
			for _, other := range []string{name + "_", strings.ToUpper(name)} {
				if _, err := tl.Decode(json.RawMessage(`{"` + other + `":null}`)); err == nil {
					t.Errorf("%s: %q accepted, but the schema does not name it", tl.Name, other)
				}
			}
		}
		if _, err := tl.Decode(json.RawMessage(`{"not_an_argument":1}`)); err == nil {
			t.Errorf("%s: an unknown argument accepted", tl.Name)
		}
		req, _ := s["required"].([]string)
		for _, r := range req {
			if _, ok := props[r]; !ok {
				t.Errorf("%s: required %q is not a property", tl.Name, r)
			}
		}
		if slices.Contains([]string{"git_document_get"}, tl.Name) != (len(req) == 1 && req[0] == "source_id") {
			t.Errorf("%s: required = %v", tl.Name, req)
		}
	}
}

// TestArgsOfRefusesUndeclaredFields: a field without an arg tag naming a
// schema is a programming error caught when the table is built.
func TestArgsOfRefusesUndeclaredFields(t *testing.T) {
	t.Parallel()
	type noTag struct {
		Key *string `json:"key"`
	}
	defer func() {
		if recover() == nil {
			t.Error("a field without an arg tag was accepted")
		}
	}()
	mcp.Typed(func(_ context.Context, _ mcp.Principal, _ *noTag) (any, error) { return nil, nil })
}

// TestRequiredArgumentMessages: checkArgs refuses a missing required
// argument, or a malformed memory key, with the message each handler gave
// when it checked them itself, the first in field order.
func TestRequiredArgumentMessages(t *testing.T) {
	t.Parallel()
	byName := map[string]*mcp.Tool{}
	for _, tl := range allTools() {
		byName[tl.Name] = tl
	}
	badKey := "key must be 1-200 bytes of [A-Za-z0-9._/-]"
	for _, c := range []struct{ tool, args, want string }{
		{"memory_put", `{}`, "key is required"},
		{"memory_put", `{"key":"bad key"}`, badKey},
		{"memory_put", `{"key":"ok"}`, "content is required"},
		{"memory_get", `{"key":""}`, badKey},
		{"memory_delete", `{}`, "key is required"},
		{"task_create", `{}`, "title is required"},
		{"task_get", `{}`, "task_id is required"},
		{"task_update", `{"title":"x"}`, "task_id is required"},
		{"git_document_get", `{"cursor":"c"}`, "source_id is required"},
		{"workflow_get", `{}`, "workflow_id is required"},
		{"workflow_dispatch", `{"task_id":"x","profile":"y"}`, "task_id, profile and mode are required"},
		{"workflow_correct", `{"note":"n"}`, "workflow_id and note are required"},
		{"memory_list", `{}`, ""},
		{"memory_put", `{"key":"a/b.c_d-1","content":""}`, ""},
	} {
		tl := byName[c.tool]
		a, err := tl.Decode(json.RawMessage(c.args))
		if err != nil {
			t.Fatalf("%s %s: decode: %v", c.tool, c.args, err)
		}
		got := ""
		if err := tl.Check(a); err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("%s %s: %q, want %q", c.tool, c.args, got, c.want)
		}
	}
}
