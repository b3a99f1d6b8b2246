package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"

	"heyaira/github"
	"heyaira/github/githubtest"
	"heyaira/server/internal/servertest"
	"heyaira/server/mcp"
	"heyaira/store"
)

// TestBT43RefusalsSayWhatToDo: the refusals a new user meets in the first
// hour name the next step (the tool, the setting or the admin command), and
// name nothing of another project or any secret.
func TestBT43RefusalsSayWhatToDo(t *testing.T) {
	t.Parallel()
	e := servertest.New(t)
	tn := e.NewTenant("o", "r")
	tok := e.Token(tn, "documents:read", "workflows:read", "workflows:write")
	message := func(sc map[string]any) string {
		m, _ := sc["error"].(map[string]any)
		s, _ := m["message"].(string)
		return s
	}
	wantAll := func(name, got string, want ...string) {
		t.Helper()
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: message %q does not say %q", name, got, w)
			}
		}
	}

	// runtime_unconfigured names the admin command, for this project.
	wantAll("runtime_unconfigured", message(e.WantCode(tok, "runtime_bootstrap_get", map[string]any{}, "runtime_unconfigured")),
		"heyaira-admin add-document-source --project-id "+tn.Project, "--document-role runtime")

	// A tracking source read on its own points to workflow_dispatch.
	tracking := e.AddSource(tn, "instruction", "docs/agents/a.md", "", "main", 65536)
	wantAll("source_requires_dispatch", message(e.WantCode(tok, "git_document_get", map[string]any{"source_id": tracking},
		"source_requires_dispatch")), "workflow_dispatch", "--commit-sha")

	// An unlinked repository: the tool says how it is linked again; the
	// admin command that meets it names link-repository with the flags.
	pinned := e.AddSource(tn, "reference", "x.md", servertest.CommitA, "", 65536)
	e.Exec(`UPDATE repositories SET revoked_at = now() WHERE id = $1`, tn.Repo)
	wantAll("repository_revoked", message(e.WantCode(tok, "git_document_get", map[string]any{"source_id": pinned},
		"repository_revoked")), "heyaira-admin link-repository", "runtime_bootstrap_get")
	_, err := e.DB.AddDocumentSource(t.Context(), store.NewDocumentSource{ProjectID: tn.Project, GitHubOwner: "o",
		GitHubRepository: "elsewhere", Role: "runtime", Path: "x.md", CommitSHA: servertest.CommitA, FragmentLimit: 65536})
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("add-document-source on an unlinked repository: %v", err)
	}
	wantAll("not linked", err.Error(), "link it first with heyaira-admin link-repository --project-id "+tn.Project,
		"--github-owner o --github-repository elsewhere --github-installation-id")

	// provider_unconfigured names the missing setting, from a real client.
	for _, c := range []struct {
		name   string
		client *github.Client
		b      github.Binding
		want   string
	}{
		{"no App ID", github.NewClient(github.Config{}), github.Binding{Owner: "o", Repo: "r", InstallationID: 1}, "HEYAIRA_GITHUB_APP_ID"},
		{"no App key", github.NewClient(github.Config{AppID: "1"}), github.Binding{Owner: "o", Repo: "r", InstallationID: 1}, "HEYAIRA_GITHUB_APP_PRIVATE_KEY_FILE"},
		{"no installation", e.GH.Client(), github.Binding{Owner: "o", Repo: "r"}, "--github-installation-id"},
	} {
		_, err := c.client.GetFile(context.Background(), c.b, "x.md", servertest.CommitA)
		code, public := mcp.Classify(err)
		if code != "provider_unconfigured" || !strings.Contains(public, c.want) {
			t.Errorf("%s: %s %q, want provider_unconfigured naming %s", c.name, code, public, c.want)
		}
	}
}

// TestGitHubFailuresSayWhy: when GitHub cannot be reached the tool
// error says so, not that GitHub answered badly, and one WARN line names the
// cause class and the request id (never a token: the canaries check the
// log); a GitHub that answers 500 is told apart.
// Row LG-05: a GitHub failure is logged once with its cause class and the
// request id, never a token.
func TestGitHubFailuresSayWhy(t *testing.T) {
	t.Parallel()
	refused := func(c *github.Config) {
		c.HTTP = &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return nil, &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
		}}}
	}
	e := servertest.NewGitHub(t, []githubtest.Option{refused})
	tn := e.NewTenant("o", "r")
	e.GH.AddFile("o", "r", servertest.CommitA, "a.md", []byte("hello"))
	src := e.AddSource(tn, "runtime", "a.md", servertest.CommitA, "", 1000)
	tok := e.Token(tn, "documents:read")
	sc := e.WantCode(tok, "git_document_get", map[string]any{"source_id": src}, "provider_unavailable")
	msg := sc["error"].(map[string]any)["message"].(string)
	if !strings.Contains(msg, "could not be reached") || !strings.Contains(msg, "(request ") {
		t.Errorf("unreachable GitHub: message %q", msg)
	}
	var warn map[string]any
	for _, line := range strings.Split(e.Logs.String(), "\n") {
		if strings.Contains(line, `"msg":"github unavailable"`) {
			json.Unmarshal([]byte(line), &warn)
		}
	}
	if warn["level"] != "WARN" || !strings.Contains(fmt.Sprint(warn["cause"]), "connection refused") || warn["req_id"] == nil ||
		!strings.Contains(msg, warn["req_id"].(string)) {
		t.Errorf("the WARN line: %v", warn)
	}

	e2 := servertest.New(t)
	tn2 := e2.NewTenant("o", "r")
	e2.GH.AddFile("o", "r", servertest.CommitA, "a.md", []byte("hello"))
	src2 := e2.AddSource(tn2, "runtime", "a.md", servertest.CommitA, "", 1000)
	e2.GH.InjectN(githubtest.RouteContents, 1, githubtest.Status(500, `{"message":"down"}`))
	sc = e2.WantCode(e2.Token(tn2, "documents:read"), "git_document_get", map[string]any{"source_id": src2}, "provider_unavailable")
	if msg := sc["error"].(map[string]any)["message"].(string); !strings.Contains(msg, "answered with an error") {
		t.Errorf("GitHub 500: message %q", msg)
	}
	if !strings.Contains(e2.Logs.String(), "status 500") {
		t.Errorf("no WARN line names the status")
	}
}
