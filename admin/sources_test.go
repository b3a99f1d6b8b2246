package admin_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// change runs a command that must be accepted and must write exactly one
// audit row; it returns stdout.
func (h *harness) change(args ...string) string {
	h.t.Helper()
	before := h.auditCount()
	out := h.must(args...)
	if got := h.auditCount() - before; got != 1 {
		h.t.Errorf("%s wrote %d audit rows, want 1", args[0], got)
	}
	return out
}

// changeJSON is change with --json, decoded.
func (h *harness) changeJSON(args ...string) any {
	h.t.Helper()
	before := h.auditCount()
	var v any
	h.mustJSON(&v, args...)
	if got := h.auditCount() - before; got != 1 {
		h.t.Errorf("%s wrote %d audit rows, want 1", args[0], got)
	}
	return v
}

// read runs a read-only command with --json; it must change no table.
func (h *harness) read(args ...string) any {
	h.t.Helper()
	before := h.counts()
	var v any
	h.mustJSON(&v, args...)
	if diff := cmp.Diff(before, h.counts()); diff != "" {
		h.t.Errorf("%s changed row counts (-before +after):\n%s", args[0], diff)
	}
	return v
}

func num(s string) json.Number { return json.Number(s) }

func TestDocumentSourceOperations(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	f := h.fixture()
	names := map[string]string{f.account: "<account>", f.project: "<project>", f.repository: "<repository>"}

	// The canonical command of docs/document-sources.md, verbatim, prints the new source's ID.
	runtime := strings.TrimSpace(h.change("add-document-source", "--project-id", f.project, "--github-owner", "h8v6",
		"--github-repository", "heyaira", "--document-role", "runtime", "--path", "docs/CONTINUITY_PROTOCOL.md",
		"--commit-sha", sha))
	names[runtime] = "<runtime>"
	if !uuidRE.MatchString(runtime) {
		t.Fatalf("add-document-source printed %q, want the source ID", runtime)
	}

	// An instruction source tracking a branch, for one profile, with a small limit;
	// owner and repository match the link case-insensitively.
	got := h.changeJSON("add-document-source", "--project-id", f.project, "--github-owner", "H8V6",
		"--github-repository", "HeyAira", "--document-role", "instruction", "--path", "docs/agents/writer.md",
		"--track", "release/v2", "--profile", "writer", "--fragment-limit", "4096")
	instruction := got.(map[string]any)["source_id"].(string)
	names[instruction] = "<instruction>"
	wantInstruction := map[string]any{
		"source_id": "<instruction>", "project_id": "<project>", "repository_id": "<repository>",
		"github_owner": "h8v6", "github_repository": "heyaira", "github_installation_id": num("42"),
		"github_repository_id": nil, "role": "instruction", "path": "docs/agents/writer.md",
		"commit_sha": nil, "tracking_ref": "release/v2", "profile": "writer", "fragment_limit": num("4096"),
		"created_at": "<time>", "revoked_at": nil, "repository_revoked_at": nil,
	}
	if diff := cmp.Diff(wantInstruction, normalize(got, names)); diff != "" {
		t.Errorf("add-document-source --json (-want +got):\n%s", diff)
	}

	wantRuntime := map[string]any{
		"source_id": "<runtime>", "project_id": "<project>", "repository_id": "<repository>",
		"github_owner": "h8v6", "github_repository": "heyaira", "github_installation_id": num("42"),
		"github_repository_id": nil, "role": "runtime", "path": "docs/CONTINUITY_PROTOCOL.md",
		"commit_sha": sha, "tracking_ref": nil, "profile": nil, "fragment_limit": num("65536"),
		"created_at": "<time>", "revoked_at": nil, "repository_revoked_at": nil,
	}
	wantRepo := map[string]any{
		"id": "<repository>", "project_id": "<project>", "github_owner": "h8v6", "github_repository": "heyaira",
		"github_installation_id": num("42"), "github_repository_id": nil, "created_at": "<time>", "revoked_at": nil,
	}
	list := h.read("list-document-sources", "--project-id", f.project)
	want := map[string]any{
		"project_id":   "<project>",
		"repositories": []any{wantRepo},
		"sources":      []any{wantRuntime, wantInstruction},
	}
	if diff := cmp.Diff(want, normalize(list, names)); diff != "" {
		t.Errorf("list-document-sources --json (-want +got):\n%s", diff)
	}

	// Revoking marks the source; it stays listed.
	got = h.changeJSON("revoke-document-source", "--source-id", instruction)
	wantInstruction["revoked_at"] = "<time>"
	if diff := cmp.Diff(wantInstruction, normalize(got, names)); diff != "" {
		t.Errorf("revoke-document-source --json (-want +got):\n%s", diff)
	}

	// Unlinking the repository revokes the link, not the sources; a new link is a new row.
	got = h.changeJSON("unlink-repository", "--project-id", f.project, "--github-owner", "h8v6", "--github-repository", "heyaira")
	wantRepo["revoked_at"] = "<time>"
	if diff := cmp.Diff(wantRepo, normalize(got, names)); diff != "" {
		t.Errorf("unlink-repository --json (-want +got):\n%s", diff)
	}
	got = h.changeJSON("link-repository", "--project-id", f.project, "--github-owner", "h8v6", "--github-repository",
		"heyaira", "--github-installation-id", "43", "--github-repository-id", "987654")
	relink := map[string]any{
		"id": "<uuid>", "project_id": "<project>", "github_owner": "h8v6", "github_repository": "heyaira",
		"github_installation_id": num("43"), "github_repository_id": num("987654"), "created_at": "<time>", "revoked_at": nil,
	}
	if diff := cmp.Diff(relink, normalize(got, names)); diff != "" {
		t.Errorf("link-repository --json (-want +got):\n%s", diff)
	}
	list = h.read("list-document-sources", "--project-id", f.project)
	wantRuntime["repository_revoked_at"] = "<time>"
	wantInstruction["repository_revoked_at"] = "<time>"
	want["repositories"] = []any{wantRepo, relink}
	if diff := cmp.Diff(want, normalize(list, names)); diff != "" {
		t.Errorf("list-document-sources after unlink (-want +got):\n%s", diff)
	}

	// Text output: one table of links and one of sources.
	text := h.must("list-document-sources", "--project-id", f.project)
	for _, s := range []string{runtime, "docs/CONTINUITY_PROTOCOL.md", sha, "track:release/v2", "repository unlinked", "revoked"} {
		if !strings.Contains(text, s) {
			t.Errorf("list-document-sources text lacks %q:\n%s", s, text)
		}
	}
}

func TestAccountSourceOperations(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	f := h.fixture()
	names := map[string]string{f.account: "<account>"}

	got := h.changeJSON("add-account-source", "--account-id", f.account, "--github-owner", "h8v6",
		"--github-repository", "agents", "--github-installation-id", "42", "--layer", "core",
		"--path", "docs/agents/core.md", "--track", "main")
	core := got.(map[string]any)["source_id"].(string)
	names[core] = "<core>"
	wantCore := map[string]any{
		"source_id": "<core>", "account_id": "<account>", "github_owner": "h8v6", "github_repository": "agents",
		"github_installation_id": num("42"), "layer": "core", "path": "docs/agents/core.md",
		"commit_sha": nil, "tracking_ref": "main", "created_at": "<time>", "revoked_at": nil,
	}
	if diff := cmp.Diff(wantCore, normalize(got, names)); diff != "" {
		t.Errorf("add-account-source --json (-want +got):\n%s", diff)
	}
	worker := strings.TrimSpace(h.change("add-account-source", "--account-id", f.account, "--github-owner", "h8v6",
		"--github-repository", "agents", "--github-installation-id", "42", "--layer", "mode:worker",
		"--path", "docs/agents/modes/worker.md", "--commit-sha", sha))
	names[worker] = "<worker>"
	wantWorker := map[string]any{
		"source_id": "<worker>", "account_id": "<account>", "github_owner": "h8v6", "github_repository": "agents",
		"github_installation_id": num("42"), "layer": "mode:worker", "path": "docs/agents/modes/worker.md",
		"commit_sha": sha, "tracking_ref": nil, "created_at": "<time>", "revoked_at": nil,
	}

	got = h.changeJSON("revoke-account-source", "--source-id", core)
	wantCore["revoked_at"] = "<time>"
	if diff := cmp.Diff(wantCore, normalize(got, names)); diff != "" {
		t.Errorf("revoke-account-source --json (-want +got):\n%s", diff)
	}
	list := h.read("list-account-sources", "--account-id", f.account)
	want := map[string]any{"account_id": "<account>", "sources": []any{wantCore, wantWorker}}
	if diff := cmp.Diff(want, normalize(list, names)); diff != "" {
		t.Errorf("list-account-sources --json (-want +got):\n%s", diff)
	}
	// Another account sees none of them.
	list = h.read("list-account-sources", "--account-id", f.otherAccount)
	if diff := cmp.Diff(map[string]any{"account_id": "<other>", "sources": []any{}},
		normalize(list, map[string]string{f.otherAccount: "<other>"})); diff != "" {
		t.Errorf("list-account-sources of another account (-want +got):\n%s", diff)
	}
}
