package admin_test

import (
	"errors"
	"strings"
	"testing"

	"heyaira/admin"

	"github.com/google/go-cmp/cmp"
)

// unknownID is a well-formed UUID that names nothing.
const unknownID = "00000000-0000-4000-8000-000000000000"

// TestRefusedCommandsWriteNothing: every refused command fails with a usage
// error (exit 2) or a failure (exit 1), says why in one line, and leaves
// every table as it was.
// Row IN-01 (docs/security-tests.md).
func TestRefusedCommandsWriteNothing(t *testing.T) {
	t.Parallel()
	// seed is the accepted command; each case changes it.
	seed := func(f fixture) []string {
		return []string{"add-document-source", "--project-id", f.project, "--github-owner", "h8v6",
			"--github-repository", "heyaira", "--document-role", "runtime",
			"--path", "docs/CONTINUITY_PROTOCOL.md", "--commit-sha", sha}
	}
	// with replaces (or, with a new flag, appends) flag values of args; a nil value drops the flag.
	with := func(args []string, kv ...any) []string {
		out := append([]string(nil), args...)
		for i := 0; i < len(kv); i += 2 {
			flag := "--" + kv[i].(string)
			j := indexOf(out, flag)
			switch v := kv[i+1].(type) {
			case nil:
				if j >= 0 {
					out = append(out[:j], out[j+2:]...)
				}
			case string:
				if j >= 0 {
					out[j+1] = v
				} else {
					out = append(out, flag, v)
				}
			}
		}
		return out
	}
	account := func(f fixture) []string {
		return []string{"add-account-source", "--account-id", f.account, "--github-owner", "h8v6",
			"--github-repository", "agents", "--github-installation-id", "42", "--layer", "core",
			"--path", "docs/agents/core.md", "--track", "main"}
	}
	const usage, failure = true, false
	tests := []struct {
		name  string
		args  func(f fixture) []string
		usage bool   // want ErrUsage (exit 2); else a failure (exit 1)
		want  string // part of the one-line reason
	}{
		{"39-char SHA", func(f fixture) []string { return with(seed(f), "commit-sha", sha[:39]) }, usage, "--commit-sha: commit SHA must be exactly 40 lowercase hex"},
		{"upper-case SHA", func(f fixture) []string { return with(seed(f), "commit-sha", strings.ToUpper(sha)) }, usage, "--commit-sha"},
		{"path ../x", func(f fixture) []string { return with(seed(f), "path", "../x") }, usage, "--path: segment 1"},
		{"path /abs", func(f fixture) []string { return with(seed(f), "path", "/abs") }, usage, "--path: starts with '/': give the path relative to the repository root, e.g. docs/a.md"},
		{"path a/", func(f fixture) []string { return with(seed(f), "path", "a/") }, usage, "--path: ends with '/': give the path of a file"},
		{"path a//b", func(f fixture) []string { return with(seed(f), "path", "a//b") }, usage, "--path: segment 2 is empty"},
		{"path a/./b", func(f fixture) []string { return with(seed(f), "path", "a/./b") }, usage, "--path: segment 2"},
		{`path a\b`, func(f fixture) []string { return with(seed(f), "path", `a\b`) }, usage, "--path: contains a backslash"},
		{"path %2e%2e/x", func(f fixture) []string { return with(seed(f), "path", "%2e%2e/x") }, usage, "--path: contains a percent-escape"},
		{"path with control char", func(f fixture) []string { return with(seed(f), "path", "docs/a\x01b.md") }, usage, "--path: contains a control character"},
		{"path with newline", func(f fixture) []string { return with(seed(f), "path", "docs/a\nb.md") }, usage, "--path: contains a control character"},
		{"path of 1025 bytes", func(f fixture) []string { return with(seed(f), "path", strings.Repeat("a", 1025)) }, usage, "--path: longer than 1024 bytes"},
		{"empty path", func(f fixture) []string { return with(seed(f), "path", nil) }, usage, "--path: empty"},
		{"both track and commit", func(f fixture) []string {
			return with(seed(f), "document-role", "instruction", "track", "main")
		}, usage, "give only one of --commit-sha and --track"},
		{"neither track nor commit", func(f fixture) []string { return with(seed(f), "commit-sha", nil) }, usage, "give one of --commit-sha and --track"},
		{"track refs/tags/v1", func(f fixture) []string {
			return with(seed(f), "document-role", "instruction", "commit-sha", nil, "track", "refs/tags/v1")
		}, usage, `--track: starts with "refs/"`},
		{"track refs/heads/main", func(f fixture) []string {
			return with(seed(f), "document-role", "instruction", "commit-sha", nil, "track", "refs/heads/main")
		}, usage, "--track"},
		{"track with role runtime", func(f fixture) []string { return with(seed(f), "commit-sha", nil, "track", "main") }, usage, "--track is allowed only with --document-role instruction"},
		{"track with role reference", func(f fixture) []string {
			return with(seed(f), "document-role", "reference", "commit-sha", nil, "track", "main")
		}, usage, "--track is allowed only"},
		{"unknown role", func(f fixture) []string { return with(seed(f), "document-role", "soul") }, usage, "--document-role must be one of"},
		{"profile with role runtime", func(f fixture) []string { return with(seed(f), "profile", "writer") }, usage, "--profile is allowed only"},
		{"bad profile", func(f fixture) []string { return with(seed(f), "document-role", "instruction", "profile", "Writer!") }, usage, "--profile must match"},
		{"fragment limit 0", func(f fixture) []string { return with(seed(f), "fragment-limit", "0") }, usage, "--fragment-limit must be between 1 and 65536"},
		{"fragment limit 65537", func(f fixture) []string { return with(seed(f), "fragment-limit", "65537") }, usage, "--fragment-limit must be between 1 and 65536"},
		{"fragment limit not a number", func(f fixture) []string { return with(seed(f), "fragment-limit", "64k") }, usage, "fragment-limit"},
		{"project id not a UUID", func(f fixture) []string { return with(seed(f), "project-id", "p1") }, usage, "--project-id must be a UUID"},
		{"project id in upper case", func(f fixture) []string { return with(seed(f), "project-id", strings.ToUpper(f.project)) }, usage, "--project-id must be a UUID in lower case"},
		{"bad owner", func(f fixture) []string { return with(seed(f), "github-owner", "h8v6/x") }, usage, "--github-owner"},
		{"bad repository", func(f fixture) []string { return with(seed(f), "github-repository", "..") }, usage, "--github-repository"},
		{"unknown flag", func(f fixture) []string { return with(seed(f), "branch", "main") }, usage, "flag provided but not defined"},
		{"positional argument", func(f fixture) []string { return append(seed(f), "extra") }, usage, `unexpected argument "extra"`},
		{"unknown project", func(f fixture) []string { return with(seed(f), "project-id", unknownID) }, failure, "project " + unknownID + " not found"},
		{"repository not linked", func(f fixture) []string { return with(seed(f), "github-repository", "other") }, failure, "repository h8v6/other is not linked to project "},
		{"repository unlinked", func(f fixture) []string { return with(seed(f), "github-repository", "old") }, failure, "repository h8v6/old is not linked to project "},
		{"repository of another project", func(f fixture) []string { return with(seed(f), "github-repository", "elsewhere") }, failure, "is not linked to project "},

		{"account source outside docs/agents", func(f fixture) []string { return with(account(f), "path", "docs/other/core.md") }, usage, "--path must name a document under docs/agents/"},
		{"account source docs/agents/ itself", func(f fixture) []string { return with(account(f), "path", "docs/agents/") }, usage, "--path"},
		{"account source escaping docs/agents", func(f fixture) []string { return with(account(f), "path", "docs/agents/../x.md") }, usage, "--path: segment 3"},
		{"account source layer soul", func(f fixture) []string { return with(account(f), "layer", "soul") }, usage, "--layer must be one of core, mode:worker, mode:verifier"},
		{"account source tracking a tag", func(f fixture) []string { return with(account(f), "track", "refs/tags/v1") }, usage, "--track"},
		{"account source both refs", func(f fixture) []string { return with(account(f), "commit-sha", sha) }, usage, "give only one of --track and --commit-sha"},
		{"account source installation 0", func(f fixture) []string { return with(account(f), "github-installation-id", "0") }, usage, "--github-installation-id"},
		{"account source unknown account", func(f fixture) []string { return with(account(f), "account-id", unknownID) }, failure, "account " + unknownID + " not found"},

		{"link twice", func(f fixture) []string {
			return []string{"link-repository", "--project-id", f.project, "--github-owner", "H8V6",
				"--github-repository", "HeyAira", "--github-installation-id", "7"}
		}, failure, "repository h8v6/heyaira is already linked to project"},
		{"link repository id 0", func(f fixture) []string {
			return []string{"link-repository", "--project-id", f.project, "--github-owner", "h8v6",
				"--github-repository", "x", "--github-installation-id", "7", "--github-repository-id", "0"}
		}, usage, "--github-repository-id"},
		{"unlink what is not linked", func(f fixture) []string {
			return []string{"unlink-repository", "--project-id", f.project, "--github-owner", "h8v6", "--github-repository", "old"}
		}, failure, "repository h8v6/old is not linked"},
		{"create-account without name", func(f fixture) []string { return []string{"create-account"} }, usage, "--name is required"},
		{"create-account name too long", func(f fixture) []string { return []string{"create-account", "--name", strings.Repeat("é", 201)} }, usage, "at most 200 characters"},
		{"create-project unknown account", func(f fixture) []string {
			return []string{"create-project", "--account-id", unknownID, "--name", "p"}
		}, failure, "account " + unknownID + " not found"},
		{"add-member across accounts", func(f fixture) []string {
			return []string{"add-member", "--project-id", f.project, "--principal-id", f.stranger}
		}, failure, "belongs to account"},
		{"add-member twice", func(f fixture) []string {
			return []string{"add-member", "--project-id", f.project, "--principal-id", f.principal}
		}, failure, "already a member"},
		{"add-member unknown principal", func(f fixture) []string {
			return []string{"add-member", "--project-id", f.project, "--principal-id", unknownID}
		}, failure, "principal " + unknownID + " not found"},
		{"signin-link unknown principal", func(f fixture) []string { return []string{"signin-link", "--principal-id", unknownID} }, failure, "not found"},
		{"revoke unknown source", func(f fixture) []string { return []string{"revoke-document-source", "--source-id", unknownID} }, failure, "not found"},
		{"revoke source twice", func(f fixture) []string { return []string{"revoke-document-source", "--source-id", f.revokedSource} }, failure, "already revoked"},
		{"legacy token unknown project", func(f fixture) []string {
			return []string{"issue-legacy-token", "--project-id", unknownID, "--name", "ci"}
		}, failure, "project " + unknownID + " not found"},
		{"revoke-token with both ids", func(f fixture) []string {
			return []string{"revoke-token", "--token-id", unknownID, "--legacy-token-id", unknownID}
		}, usage, "give only one of"},
		{"revoke unknown token", func(f fixture) []string { return []string{"revoke-token", "--token-id", unknownID} }, failure, "token " + unknownID + " not found"},
		{"revoke unknown grant", func(f fixture) []string { return []string{"revoke-grant", "--grant-id", unknownID} }, failure, "grant " + unknownID + " not found"},
		{"audit bad since", func(f fixture) []string { return []string{"audit", "--project-id", f.project, "--since", "yesterday"} }, usage, "--since must be an RFC 3339 time"},
		{"audit unknown project", func(f fixture) []string { return []string{"audit", "--project-id", unknownID} }, failure, "not found"},
		{"unknown command", func(f fixture) []string { return []string{"add-source"} }, usage, "heyaira-admin help lists the commands"},
		{"misspelt command", func(f fixture) []string { return []string{"add-document-sorce"} }, usage, "did you mean add-document-source?"},
		{"misspelt flag", func(f fixture) []string { return with(seed(f), "comit-sha", sha) }, usage, "did you mean --commit-sha?"},
		{"short SHA", func(f fixture) []string { return with(seed(f), "commit-sha", sha[:7]) }, usage, "`git rev-parse <short-sha>` in a clone prints the full 40"},
		{"owner as a URL", func(f fixture) []string { return with(seed(f), "github-owner", "https://github.com/h8v6") }, usage, "give the owner's name alone"},
	}
	// The cases share one database and run one after another, because each
	// must leave it unchanged: counting rows around each case shows exactly
	// which one wrote (and the next cases would notice it too).
	h := newHarness(t)
	f := h.refusalFixture()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := h.sub(t)
			args := tt.args(f)
			before := h.counts()
			stdout, stderr, err := h.run(args...)
			if diff := cmp.Diff(before, h.counts()); diff != "" {
				t.Errorf("refused command changed row counts (-before +after):\n%s", diff)
			}
			if err == nil {
				t.Fatalf("command succeeded; stdout %q", stdout)
			}
			if stdout != "" && tt.want != "" {
				t.Errorf("stdout = %q, want nothing", stdout)
			}
			if got := errors.Is(err, admin.ErrUsage); got != tt.usage {
				t.Errorf("errors.Is(err, ErrUsage) = %v, want %v (err %v)", got, tt.usage, err)
			}
			if !tt.usage && stderr != "" {
				// main prints the reason; nothing else may be said (no note
				// of a check that a refused command never needed).
				t.Errorf("a refused command also printed %q", stderr)
			}
			reason := err.Error()
			if tt.usage && tt.want != "" {
				// Usage errors are printed by Run, since main prints nothing for them.
				reason = stderr
				if strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "heyaira-admin: ") {
					t.Errorf("stderr = %q, want one line starting with heyaira-admin: ", stderr)
				}
			}
			if strings.Contains(strings.TrimSuffix(reason, "\n"), "\n") {
				t.Errorf("reason spans several lines: %q", reason)
			}
			if !strings.Contains(reason, tt.want) {
				t.Errorf("reason = %q, want it to contain %q", reason, tt.want)
			}
			if tt.usage {
				// Input is checked before the database is opened: without a
				// database URL the same usage error comes back.
				if _, _, err := runWith(t, map[string]string{}, args...); !errors.Is(err, admin.ErrUsage) {
					t.Errorf("without a database: err = %v, want the usage error", err)
				}
			}
		})
	}
}

// refusalFixture is fixture plus an unlinked repository h8v6/old, a linked
// repository h8v6/elsewhere of another project, and a revoked source.
func (h *harness) refusalFixture() fixture {
	h.t.Helper()
	f := h.fixture()
	h.must("add-member", "--project-id", f.project, "--principal-id", f.principal)
	h.must("link-repository", "--project-id", f.project, "--github-owner", "h8v6", "--github-repository", "old",
		"--github-installation-id", "42")
	h.must("unlink-repository", "--project-id", f.project, "--github-owner", "h8v6", "--github-repository", "old")
	other := h.id("create-project", "--account-id", f.account, "--name", "Other")
	h.must("link-repository", "--project-id", other, "--github-owner", "h8v6", "--github-repository", "elsewhere",
		"--github-installation-id", "42")
	src := h.id("add-document-source", "--project-id", f.project, "--github-owner", "h8v6", "--github-repository",
		"heyaira", "--document-role", "reference", "--path", "README.md", "--commit-sha", sha)
	h.must("revoke-document-source", "--source-id", src)
	f.revokedSource = src
	return f
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}
