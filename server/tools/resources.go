package tools

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"heyaira/oauth"
	"heyaira/server/catalog"
	"heyaira/server/mcp"
	"heyaira/store"
)

// The project's pinned document sources as MCP resources: listed from the
// database alone, and read through git_document_get's own path (get), so a
// resource read is authorized, checked, hashed and audited as a tool read
// is. Tracking sources need a dispatch to be read, and account sources feed
// dispatch only: neither is a resource.

const (
	resourcePrefix   = "heyaira://sources/"
	resourcePageSize = 100
	maxCompletions   = 100
	listTTL          = 60 * 1000           // a list changes when an administrator edits the allowlist
	pinnedTTL        = 24 * 60 * 60 * 1000 // a pinned read is fixed by its commit
)

func (d *documentTools) methods() []*mcp.Tool {
	return []*mcp.Tool{
		{Name: "resources/list", Method: true, TTL: listTTL, Scope: oauth.DocumentsRead, ToolArgs: mcp.Typed(d.listResources)},
		{Name: "resources/read", Method: true, TTL: pinnedTTL, Scope: oauth.DocumentsRead, ToolArgs: mcp.Typed(d.readResource)},
		{Name: "completion/complete", Method: true, TTL: listTTL, ToolArgs: mcp.Typed(d.complete)},
	}
}

type resourceListArgs struct {
	Cursor *string         `json:"cursor" arg:"cursor"`
	Meta   json.RawMessage `json:"_meta" arg:"object"`
}

// pinnedSources are the project's readable sources whose id sorts after
// after, in id order.
func (d *documentTools) pinnedSources(ctx context.Context, p mcp.Principal, after string) ([]store.DocumentSource, error) {
	sources, err := d.st.ActiveSources(ctx, p.Auth.ProjectID)
	slices.SortFunc(sources, func(a, b store.DocumentSource) int { return cmp.Compare(a.ID, b.ID) })
	return slices.DeleteFunc(sources, func(s store.DocumentSource) bool { return s.CommitSHA == nil || s.ID <= after }), err
}

func (d *documentTools) listResources(ctx context.Context, p mcp.Principal, a *resourceListArgs) (any, error) {
	out, err := listPage(d.pages, "resources", p, a.Cursor, resourcePageSize, "resources",
		func(after string) ([]store.DocumentSource, error) {
			all, err := d.pinnedSources(ctx, p, after)
			return all[:min(len(all), resourcePageSize)], err
		}, func(s store.DocumentSource) string { return s.ID }, nil)
	if err != nil {
		return nil, err
	}
	m := out.(map[string]any)
	list := []map[string]any{}
	for _, s := range m["resources"].([]store.DocumentSource) {
		list = append(list, map[string]any{"uri": resourcePrefix + s.ID, "name": s.Path, "mimeType": mimeType(s.Path),
			"title": fmt.Sprintf("%s/%s:%s@%.12s (%s)", s.GitHubOwner, s.GitHubRepository, s.Path, *s.CommitSHA, s.Role),
			"_meta": map[string]any{"io.heyaira/commit_sha": *s.CommitSHA, "io.heyaira/role": s.Role}})
	}
	res := map[string]any{"resources": list}
	if c, ok := m["next_cursor"]; ok {
		res["nextCursor"] = c
	}
	return res, nil
}

// mimeType is what a source's path says of its text.
func mimeType(path string) string {
	if strings.HasSuffix(path, ".md") || strings.HasSuffix(path, ".markdown") {
		return "text/markdown"
	}
	return "text/plain"
}

type resourceReadArgs struct {
	URI  *string         `json:"uri" arg:"text,required"`
	Meta json.RawMessage `json:"_meta" arg:"object"`
}

var (
	errResourceURI = mcp.InvalidArgument("uri must be " + mcp.ResourceTemplate +
		" with a source_id (a UUID) from resources/list, with no query or fragment")
	errNoResource = mcp.NewCoded("source_not_found", "no such resource in this project; resources/list lists the documents it can read")
)

// readResource reads the first fragment of a resource, as git_document_get
// without a cursor does. A source the project cannot read as a resource
// (another project's, revoked, unlinked, tracking) is one that is not there.
func (d *documentTools) readResource(ctx context.Context, p mcp.Principal, a *resourceReadArgs) (any, error) {
	// A refusal names the URI in its data, as MCP asks of resource errors.
	refuse := func(err error) error {
		code, public := mcp.Classify(err)
		return mcp.WithFields(code, public, map[string]any{"uri": *a.URI})
	}
	id, ok := strings.CutPrefix(*a.URI, resourcePrefix)
	if !ok || !store.IsUUID(id) {
		return nil, refuse(errResourceURI)
	}
	v, err := d.get(ctx, p, &documentGetArgs{SourceID: &id})
	if code, _ := mcp.Classify(err); slices.Contains([]string{"source_not_found", "source_revoked",
		"repository_revoked", "source_requires_dispatch"}, code) {
		return nil, refuse(errNoResource)
	}
	if err != nil {
		return nil, err
	}
	res := v.(*documentResult)
	meta := map[string]any{"io.heyaira/commit_sha": res.CommitSHA, "io.heyaira/sha256": res.SHA256,
		"io.heyaira/fragment_sha256": res.FragmentSHA256, "io.heyaira/range": res.Range}
	contents := []map[string]any{{"uri": *a.URI, "mimeType": mimeType(res.Path), "text": res.Content, "_meta": meta}}
	if res.NextCursor != "" {
		meta["io.heyaira/next_cursor"] = res.NextCursor
		contents = append(contents, map[string]any{"uri": *a.URI, "mimeType": "text/plain", "text": fmt.Sprintf(
			"This is bytes %d to %d of %d of %s. Call git_document_get with source_id %s and cursor %s for the rest.",
			res.Range.StartByte, res.Range.EndByte, res.Range.TotalBytes, res.Path, id, res.NextCursor)})
	}
	return map[string]any{"contents": contents}, nil
}

type completeArgs struct {
	Ref *struct {
		Type string `json:"type"`
		Name string `json:"name"`
		URI  string `json:"uri"`
	} `json:"ref" arg:"object,required"`
	Argument *struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	} `json:"argument" arg:"object,required"`
	Context json.RawMessage `json:"context" arg:"object"`
	Meta    json.RawMessage `json:"_meta" arg:"object"`
}

// complete offers the values that exist: the source_ids of the project's
// resources (by prefix of id or path; they name allowlisted sources, so
// documents:read is needed), or a prompt's modes.
func (d *documentTools) complete(ctx context.Context, p mcp.Principal, a *completeArgs) (any, error) {
	ref, arg := a.Ref, a.Argument
	values := []string{}
	switch {
	case ref.Type == "ref/resource" && ref.URI == mcp.ResourceTemplate && arg.Name == "source_id":
		if !p.HasScope(oauth.DocumentsRead) {
			return nil, p.Missing(oauth.DocumentsRead)
		}
		sources, err := d.pinnedSources(ctx, p, "")
		if err != nil {
			return nil, err
		}
		for _, s := range sources {
			if strings.HasPrefix(s.ID, arg.Value) || strings.HasPrefix(s.Path, arg.Value) {
				values = append(values, s.ID)
			}
		}
	case ref.Type == "ref/prompt" && arg.Name == "mode":
		if _, ok := catalog.Lookup(ref.Name); !ok {
			return nil, errNoPrompt
		}
		for _, m := range catalog.Modes() {
			if strings.HasPrefix(m, arg.Value) {
				values = append(values, m)
			}
		}
	default:
		return nil, mcp.InvalidArgument("ref must be {type: ref/resource, uri: " + mcp.ResourceTemplate +
			"} with argument source_id, or {type: ref/prompt, name: a profile} with argument mode")
	}
	return map[string]any{"completion": map[string]any{"values": values[:min(len(values), maxCompletions)],
		"total": len(values), "hasMore": len(values) > maxCompletions}}, nil
}
