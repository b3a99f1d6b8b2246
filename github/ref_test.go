package github_test

import (
	"testing"

	"heyaira/github/githubtest"
)

func TestResolveBranch(t *testing.T) {
	t.Parallel()
	srv, c, b := setup(t)
	srv.SetBranch("octo", "docs", "main", commit)
	srv.SetBranch("octo", "docs", "feat/ü x", "89abcdef0123456789abcdef0123456789abcdef")

	got, err := c.ResolveBranch(t.Context(), b, "main")
	if err != nil || got != commit {
		t.Fatalf("ResolveBranch(main) = %q, %v; want %q", got, err, commit)
	}
	got, err = c.ResolveBranch(t.Context(), b, "feat/ü x")
	if err == nil {
		t.Fatalf("ResolveBranch accepted a branch with a space: %q", got)
	}
	wantCode(t, err, "invalid_argument")

	srv.SetBranch("octo", "docs", "feat/ü", "89abcdef0123456789abcdef0123456789abcdef")
	if got, err := c.ResolveBranch(t.Context(), b, "feat/ü"); err != nil || got != "89abcdef0123456789abcdef0123456789abcdef" {
		t.Fatalf("ResolveBranch(feat/ü) = %q, %v", got, err)
	}
	var paths []string
	for _, r := range srv.Requests() {
		if r.Route == githubtest.RouteRef {
			paths = append(paths, r.Path)
		}
	}
	want := []string{"/repos/octo/docs/git/ref/heads/main", "/repos/octo/docs/git/ref/heads/feat/%C3%BC"}
	if len(paths) != 2 || paths[0] != want[0] || paths[1] != want[1] {
		t.Errorf("ref paths %q, want %q", paths, want)
	}
}

func TestResolveBranchRefused(t *testing.T) {
	t.Parallel()
	ref := func(name, typ, sha string) githubtest.Fault {
		return githubtest.JSON(200, map[string]any{"ref": name, "object": map[string]any{"type": typ, "sha": sha}})
	}
	tests := []struct {
		name   string
		branch string
		fault  githubtest.Fault
		code   string
		sent   int // ref requests expected
	}{
		{"missing", "nope", nil, "provider_not_found", 1},
		{"tag syntax refused", "refs/tags/v1", nil, "invalid_argument", 0},
		{"full ref refused", "refs/heads/main", nil, "invalid_argument", 0},
		{"traversal refused", "../main", nil, "invalid_argument", 0},
		{"another ref in the answer", "main", ref("refs/heads/main2", "commit", commit), "provider_inconsistent", 1},
		{"tag in the answer", "main", ref("refs/tags/main", "commit", commit), "provider_inconsistent", 1},
		{"tag object", "main", ref("refs/heads/main", "tag", commit), "provider_inconsistent", 1},
		{"short sha", "main", ref("refs/heads/main", "commit", commit[:12]), "provider_inconsistent", 1},
		{"409 empty repository", "main", githubtest.Status(409, `{"message":"Git Repository is empty."}`), "provider_not_found", 1},
		{"301 renamed", "main", githubtest.Redirect(301, "https://api.github.com/repositories/1/git/ref/heads/main"), "provider_redirect_rejected", 1},
		{"500", "main", githubtest.Status(500, `{}`), "provider_unavailable", 1},
		{"too large", "main", githubtest.Chunked(make([]byte, 100<<10)), "provider_response_too_large", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv, c, b := setup(t)
			srv.SetBranch("octo", "docs", "main", commit)
			if tt.fault != nil {
				srv.Inject(githubtest.RouteRef, tt.fault)
			}
			got, err := c.ResolveBranch(t.Context(), b, tt.branch)
			wantCode(t, err, tt.code)
			if got != "" {
				t.Errorf("sha %q returned with an error", got)
			}
			wantCount(t, srv, githubtest.RouteRef, tt.sent)
		})
	}
}
