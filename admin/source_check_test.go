package admin_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"heyaira/admin"
	"heyaira/github/githubtest"
	"heyaira/store/storetest"

	"github.com/google/go-cmp/cmp"
)

// TestAddDocumentSourceChecksGitHub: with the App configured, a source is
// added only when GitHub serves its document at its commit (or its branch's
// head); anything else fails with exit 1, says what GitHub answered and
// writes nothing. --skip-github-check and an unconfigured App add it anyway,
// the latter with a note on stderr.
// Row BT-45 (docs/security-tests.md).
func TestAddDocumentSourceChecksGitHub(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	f := h.fixture()
	gh := githubtest.New(t)
	const owner, repo = "docs-org", "handbook"
	inst := gh.Binding(owner, repo).InstallationID
	h.id("link-repository", "--project-id", f.project, "--github-owner", owner, "--github-repository", repo,
		"--github-installation-id", itoa(inst))
	gh.AddFile(owner, repo, sha, "docs/present.md", []byte("# here\n"))
	gh.AddDir(owner, repo, sha, "docs", "present.md")
	gh.SetBranch(owner, repo, "main", sha)
	keyFile := filepath.Join(t.TempDir(), "app.pem")
	if err := os.WriteFile(keyFile, githubtest.KeyPEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	withApp := map[string]string{"HEYAIRA_GITHUB_APP_ID": githubtest.AppID, "HEYAIRA_GITHUB_APP_PRIVATE_KEY_FILE": keyFile}
	add := func(env map[string]string, extra ...string) (string, string, error) {
		all := map[string]string{}
		for k, v := range h.env {
			all[k] = v
		}
		for k, v := range env {
			all[k] = v
		}
		args := append([]string{"add-document-source", "--project-id", f.project, "--github-owner", owner,
			"--github-repository", repo}, extra...)
		var out, errOut bytes.Buffer
		err := admin.RunWithGitHub(t.Context(), gh, args, func(k string) string { return all[k] }, &out, &errOut, storetest.Schema(t))
		return out.String(), errOut.String(), err
	}
	pinned := func(path string) []string {
		return []string{"--document-role", "reference", "--path", path, "--commit-sha", sha}
	}
	tracked := func(path, branch string) []string {
		return []string{"--document-role", "instruction", "--path", path, "--track", branch}
	}

	refusals := []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"missing at the commit", withApp, pinned("docs/absent.md"),
			"GitHub has no docs/absent.md at commit " + sha + " in docs-org/handbook, or installation"},
		{"a directory", withApp, pinned("docs"), "docs at commit " + sha + " in docs-org/handbook is not a regular file"},
		{"missing at the branch head", withApp, tracked("docs/absent.md", "main"),
			"GitHub has no docs/absent.md at the head of branch main (commit " + sha + ")"},
		{"no such branch", withApp, tracked("docs/present.md", "nope"), "GitHub has no branch nope in docs-org/handbook"},
		{"half the App configuration", map[string]string{"HEYAIRA_GITHUB_APP_ID": githubtest.AppID}, pinned("docs/present.md"),
			"set both HEYAIRA_GITHUB_APP_ID and HEYAIRA_GITHUB_APP_PRIVATE_KEY_FILE, or neither"},
		{"an unprotected key", map[string]string{"HEYAIRA_GITHUB_APP_ID": githubtest.AppID,
			"HEYAIRA_GITHUB_APP_PRIVATE_KEY_FILE": loose(t)}, pinned("docs/present.md"), "chmod 600"},
	}
	for _, tc := range refusals {
		before := h.counts()
		_, _, err := add(tc.env, tc.args...)
		if err == nil || errors.Is(err, admin.ErrUsage) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want a failure containing %q", tc.name, err, tc.want)
		}
		if err != nil && !strings.Contains(err.Error(), "--skip-github-check") {
			t.Errorf("%s: %q does not name --skip-github-check", tc.name, err)
		}
		if diff := cmp.Diff(before, h.counts()); diff != "" {
			t.Errorf("%s wrote rows (-before +after):\n%s", tc.name, diff)
		}
	}

	accepted := []struct {
		name     string
		env      map[string]string
		args     []string
		wantNote bool
	}{
		{"present at the commit", withApp, pinned("docs/present.md"), false},
		{"present at the branch head", withApp, tracked("docs/present.md", "main"), false},
		{"skipped", withApp, append(pinned("docs/later.md"), "--skip-github-check"), false},
		{"no App configured", nil, pinned("docs/unchecked.md"), true},
	}
	for _, tc := range accepted {
		out, errOut, err := add(tc.env, tc.args...)
		if err != nil || !uuidRE.MatchString(strings.TrimSpace(out)) {
			t.Errorf("%s: %v, stdout %q, want a source id", tc.name, err, out)
		}
		note := "heyaira-admin: add-document-source: note: docs/unchecked.md was not checked with GitHub"
		if got := strings.Contains(errOut, note); got != tc.wantNote {
			t.Errorf("%s: stderr %q, want the note: %v", tc.name, errOut, tc.wantNote)
		}
	}
}

// TestAddDocumentSourceRefusesDuplicate: a second active source for the
// same document fails with exit 1 naming the first and writes nothing; a
// different profile, or the same document after a revocation, is accepted.
// Row BT-45 (docs/security-tests.md).
func TestAddDocumentSourceRefusesDuplicate(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	f := h.fixture()
	args := func(extra ...string) []string {
		return append([]string{"add-document-source", "--project-id", f.project, "--github-owner", "h8v6",
			"--github-repository", "heyaira", "--document-role", "instruction", "--path", "docs/agents/a.md"}, extra...)
	}
	for _, pin := range [][]string{{"--commit-sha", sha}, {"--track", "main"}} {
		first := h.id(args(pin...)...)
		for _, dup := range [][]string{args(pin...), args(append(pin, "--fragment-limit", "100", "--github-owner", "H8V6")...)} {
			before := h.counts()
			_, _, err := h.run(dup...)
			want := "document source " + first + " already allowlists instruction docs/agents/a.md of h8v6/heyaira"
			if err == nil || errors.Is(err, admin.ErrUsage) || !strings.Contains(err.Error(), want) ||
				!strings.Contains(err.Error(), "revoke-document-source --source-id "+first) {
				t.Errorf("%v: err %v, want a failure containing %q and the revoke command", dup, err, want)
			}
			if diff := cmp.Diff(before, h.counts()); diff != "" {
				t.Errorf("the duplicate wrote rows (-before +after):\n%s", diff)
			}
		}
		h.id(args(append(pin, "--profile", "engineer")...)...)
		h.change("revoke-document-source", "--source-id", first)
		h.id(args(pin...)...)
	}
}

// loose returns a key file readable by everyone.
func loose(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "loose.pem")
	if err := os.WriteFile(p, githubtest.KeyPEM(), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chmod(p, 0o644)
	return p
}
