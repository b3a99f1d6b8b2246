package tools

import (
	"context"
	"encoding/json"
	"errors"
	"slices"

	"heyaira/cursor"
	"heyaira/server/catalog"
	"heyaira/server/internal/web"
	"heyaira/server/mcp"
	"heyaira/store"
)

// The catalog's profiles as MCP prompts. prompts/get assembles a profile as
// workflow_dispatch does (assemble: the same layers, order, budget and
// provenance, tracking branches resolved now), but stores no workflow: it
// writes one audit row naming the reader, the profile and what was read.

var errNoPrompt = mcp.NewCoded("profile_not_found", "no such prompt; prompts/list lists the catalog's profiles")

func (w *workflowTools) methods() []*mcp.Tool {
	return []*mcp.Tool{
		{Name: "prompts/list", Method: true, TTL: listTTL, Scope: "workflows:read", ToolArgs: mcp.Typed(w.listPrompts)},
		{Name: "prompts/get", Method: true, Scope: "workflows:read", ToolArgs: mcp.Typed(w.getPrompt)},
	}
}

// listPrompts answers in one page: a cursor can only be another list's.
func (w *workflowTools) listPrompts(_ context.Context, _ mcp.Principal, a *resourceListArgs) (any, error) {
	if a.Cursor != nil {
		return nil, cursor.ErrInvalid
	}
	prompts := []map[string]any{}
	for _, p := range catalog.Profiles() {
		prompts = append(prompts, map[string]any{"name": p.Name, "title": p.Title, "description": p.Description,
			"arguments": []map[string]any{{"name": "mode", "required": true,
				"description": "worker (do the task) or verifier (check another's work)"}}})
	}
	return map[string]any{"prompts": prompts}, nil
}

type promptGetArgs struct {
	Name      *string           `json:"name" arg:"text,required"`
	Arguments map[string]string `json:"arguments" arg:"object"`
	Meta      json.RawMessage   `json:"_meta" arg:"object"`
}

func (w *workflowTools) getPrompt(ctx context.Context, p mcp.Principal, a *promptGetArgs) (any, error) {
	prof, ok := catalog.Lookup(*a.Name)
	if !ok {
		return nil, errNoPrompt
	}
	for k := range a.Arguments {
		if k != "mode" {
			return nil, mcp.InvalidArgument("unknown argument " + web.Quote(k) + "; the one argument is mode")
		}
	}
	mode := a.Arguments["mode"]
	if !slices.Contains(catalog.Modes(), mode) {
		return nil, mcp.InvalidArgument("mode must be worker or verifier")
	}
	audit := map[string]any{"profile": prof.Name, "mode": mode}
	c, err := w.assemble(ctx, p, "workflows:read", prof.Name, mode, audit)
	if errors.As(err, new(*mcp.ScopeError)) {
		return nil, err
	}
	if err != nil {
		w.auditFailure(ctx, p, "prompt.get", audit, err)
		return nil, err
	}
	auditLayers(audit, c)
	// The prompt carries text read from GitHub: it fails closed without its row.
	if err := w.st.Audit(ctx, store.AuditEvent{Actor: p.Subject(), Action: "prompt.get", ProjectID: p.Auth.ProjectID,
		Outcome: store.OutcomeOK, Details: audit}); err != nil {
		return nil, err
	}
	return map[string]any{"description": prof.Description,
		"messages": []map[string]any{{"role": "user", "content": map[string]any{"type": "text",
			"text": catalog.Render(prof.Name, mode, c.Layers, "")}}},
		"_meta": map[string]any{"io.heyaira/catalog_sha256": c.CatalogSHA256, "io.heyaira/layers": catalog.WithoutText(c.Layers),
			"io.heyaira/warnings": c.Warnings, "io.heyaira/budget": c.Budget}}, nil
}
