package tools

import (
	"context"

	"heyaira/server/mcp"
)

type sourceView struct {
	SourceID         string       `json:"source_id"`
	GitHubOwner      string       `json:"github_owner"`
	GitHubRepository string       `json:"github_repository"`
	Role             string       `json:"role"`
	Path             string       `json:"path"`
	CommitSHA        *string      `json:"commit_sha"`
	TrackingRef      *string      `json:"tracking_ref"`
	Limits           sourceLimits `json:"limits"`
}

type sourceLimits struct {
	MaxFileBytes     int `json:"max_file_bytes"`
	MaxFragmentBytes int `json:"max_fragment_bytes"`
}

func (d *documentTools) bootstrap(ctx context.Context, p mcp.Principal, _ *mcp.NoArgs) (any, error) {
	sources, err := d.st.ActiveSources(ctx, p.Auth.ProjectID)
	if err != nil {
		return nil, err
	}
	views := make([]sourceView, 0, len(sources))
	runtime := false
	for _, s := range sources {
		runtime = runtime || s.Role == "runtime"
		views = append(views, sourceView{
			SourceID: s.ID, GitHubOwner: s.GitHubOwner, GitHubRepository: s.GitHubRepository,
			Role: s.Role, Path: s.Path, CommitSHA: s.CommitSHA, TrackingRef: s.TrackingRef,
			Limits: sourceLimits{MaxFileBytes: maxFileBytes, MaxFragmentBytes: s.FragmentLimit},
		})
	}
	if !runtime {
		return nil, mcp.NewCoded("runtime_unconfigured", "the project has no active runtime document source: an administrator "+
			"adds one with heyaira-admin add-document-source --project-id "+p.Auth.ProjectID+
			" --document-role runtime --github-owner O --github-repository R --path PATH --commit-sha SHA")
	}
	return map[string]any{"project_id": p.Auth.ProjectID, "sources": views}, nil
}
