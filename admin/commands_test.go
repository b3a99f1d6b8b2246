package admin_test

import (
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"heyaira/admin"
	"heyaira/store/storetest"

	"github.com/google/go-cmp/cmp"
)

var flagRE = regexp.MustCompile(`--[a-z][a-z-]*`)

// TestHelp shows that every command answers --help (and -h) with its usage
// line and flags on stdout, returns flag.ErrHelp (exit 0) and needs no
// database; and that the usage line names exactly the flags the command has.
func TestHelp(t *testing.T) {
	t.Parallel()
	cmds := admin.Commands()
	if len(cmds) != 32 {
		t.Errorf("%d commands, want 32: the 19 of docs/design.md §5, the 8 lifecycle and inventory commands, the 2 tenant-limit commands, the 2 audit-retention commands and list-legacy-reissue of docs/admin.md", len(cmds))
	}
	for _, c := range cmds {
		for _, help := range []string{"--help", "-h"} {
			t.Run(c.Name+help, func(t *testing.T) {
				t.Parallel()
				stdout, stderr, err := runWith(t, map[string]string{}, c.Name, help)
				if !errors.Is(err, flag.ErrHelp) {
					t.Fatalf("err = %v, want flag.ErrHelp", err)
				}
				if stderr != "" {
					t.Errorf("stderr = %q, want nothing", stderr)
				}
				if !strings.HasPrefix(stdout, "usage: "+c.Usage+"\n") || !strings.HasPrefix(c.Usage, "heyaira-admin "+c.Name) {
					t.Errorf("help does not start with the usage line %q:\n%s", c.Usage, stdout)
				}
				var documented []string
				for _, line := range strings.Split(stdout, "\n") {
					if strings.HasPrefix(line, "  --") {
						documented = append(documented, strings.Fields(line)[0])
					}
				}
				inUsage := append(flagRE.FindAllString(c.Usage, -1), "--json")
				slices.Sort(inUsage)
				inUsage = slices.Compact(inUsage)
				if diff := cmp.Diff(inUsage, documented); diff != "" {
					t.Errorf("flags of the usage line vs --help (-usage +help):\n%s", diff)
				}
			})
		}
	}
}

func TestCommandLineErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		args    []string
		wantErr error
		stdout  string // part of stdout
		stderr  string // part of stderr
	}{
		{"no command", nil, admin.ErrUsage, "", "commands:"},
		{"unknown command", []string{"frobnicate"}, admin.ErrUsage, "", `unknown command "frobnicate"`},
		{"help", []string{"help"}, flag.ErrHelp, "add-document-source", ""},
		{"--help", []string{"--help"}, flag.ErrHelp, "list-document-sources", ""},
		{"help of a command", []string{"help", "audit"}, flag.ErrHelp, "usage: heyaira-admin audit", ""},
		{"no database URL", []string{"create-account", "--name", "a"}, nil, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			stdout, stderr, err := runWith(t, map[string]string{}, tt.args...)
			if tt.wantErr == nil {
				if err == nil || errors.Is(err, admin.ErrUsage) || err.Error() != "create-account: HEYAIRA_DATABASE_URL is not set" {
					t.Fatalf("err = %v, want a failure naming HEYAIRA_DATABASE_URL", err)
				}
				return
			}
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if !strings.Contains(stdout, tt.stdout) || !strings.Contains(stderr, tt.stderr) {
				t.Errorf("stdout %q, stderr %q; want %q and %q", stdout, stderr, tt.stdout, tt.stderr)
			}
		})
	}
}

func TestMigrate(t *testing.T) {
	t.Parallel()
	env := map[string]string{"HEYAIRA_DATABASE_URL": storetest.NewURL(t)}
	_, _, err := runWith(t, env, "create-account", "--name", "a")
	if err == nil || !strings.Contains(err.Error(), "run heyaira-admin migrate") {
		t.Fatalf("before migrate: err = %v, want a hint to migrate", err)
	}
	for i := range 2 { // idempotent
		stdout, _, err := runWith(t, env, "migrate", "--json")
		if err != nil || stdout != "{\n  \"migrated\": true\n}\n" {
			t.Fatalf("migrate #%d: %q, %v", i+1, stdout, err)
		}
	}
	if _, _, err := runWith(t, env, "create-account", "--name", "a"); err != nil {
		t.Fatalf("after migrate: %v", err)
	}
}

func TestTenantCommands(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	account := h.changeJSON("create-account", "--name", "Acme Ltd").(map[string]any)
	a := account["id"].(string)
	names := map[string]string{a: "<account>"}
	if diff := cmp.Diff(map[string]any{"id": "<account>", "name": "Acme Ltd", "created_at": "<time>"},
		normalize(account, names)); diff != "" {
		t.Errorf("create-account --json (-want +got):\n%s", diff)
	}
	project := h.changeJSON("create-project", "--account-id", a, "--name", "Continuity").(map[string]any)
	names[project["id"].(string)] = "<project>"
	if diff := cmp.Diff(map[string]any{"id": "<project>", "account_id": "<account>", "name": "Continuity",
		"created_at": "<time>"}, normalize(project, names)); diff != "" {
		t.Errorf("create-project --json (-want +got):\n%s", diff)
	}
	principal := h.changeJSON("create-principal", "--account-id", a, "--name", "Ada Lovelace").(map[string]any)
	names[principal["id"].(string)] = "<principal>"
	if diff := cmp.Diff(map[string]any{"id": "<principal>", "account_id": "<account>", "name": "Ada Lovelace",
		"created_at": "<time>"}, normalize(principal, names)); diff != "" {
		t.Errorf("create-principal --json (-want +got):\n%s", diff)
	}
	member := h.changeJSON("add-member", "--project-id", project["id"].(string), "--principal-id", principal["id"].(string))
	if diff := cmp.Diff(map[string]any{"project_id": "<project>", "principal_id": "<principal>",
		"account_id": "<account>", "created_at": "<time>"}, normalize(member, names)); diff != "" {
		t.Errorf("add-member --json (-want +got):\n%s", diff)
	}
	link := h.changeJSON("signin-link", "--principal-id", principal["id"].(string)).(map[string]any)
	if u, _ := link["url"].(string); !strings.HasPrefix(u, "https://heyaira.example/signin?token=") {
		t.Errorf("signin-link url = %q", u)
	}
	link["url"] = "<url>"
	if diff := cmp.Diff(map[string]any{"id": "<uuid>", "principal_id": "<principal>", "url": "<url>",
		"expires_at": "<time>", "created_at": "<time>"}, normalize(link, names)); diff != "" {
		t.Errorf("signin-link --json (-want +got):\n%s", diff)
	}
}

// Row LG-03 (docs/security-tests.md).
func TestAudit(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	f := h.fixture()
	src := h.id("add-document-source", "--project-id", f.project, "--github-owner", "h8v6", "--github-repository",
		"heyaira", "--document-role", "runtime", "--path", "docs/CONTINUITY_PROTOCOL.md", "--commit-sha", sha)
	h.must("revoke-document-source", "--source-id", src)
	h.must("issue-legacy-token", "--project-id", f.project, "--name", "ci")
	h.must("add-account-source", "--account-id", f.account, "--github-owner", "h8v6", "--github-repository", "agents",
		"--github-installation-id", "42", "--layer", "core", "--path", "docs/agents/core.md", "--track", "main")

	actions := func(args ...string) []string {
		t.Helper()
		var out struct {
			Events []struct {
				Action, Target, Outcome, Actor string
				Details                        map[string]any
			}
		}
		h.mustJSON(&out, args...)
		var got []string
		for _, e := range out.Events {
			if e.Outcome != "ok" || e.Actor != "admin" || e.Target == "" {
				t.Errorf("event %+v: want outcome ok, actor admin and a target", e)
			}
			got = append(got, e.Action)
		}
		return got
	}
	want := []string{"project.create", "repository.link", "document_source.add", "document_source.revoke", "legacy_token.issue"}
	if diff := cmp.Diff(want, actions("audit", "--project-id", f.project)); diff != "" {
		t.Errorf("audit --project-id (-want +got):\n%s", diff)
	}
	want = []string{"account.create", "project.create", "principal.create", "repository.link",
		"document_source.add", "document_source.revoke", "legacy_token.issue", "account_source.add"}
	if diff := cmp.Diff(want, actions("audit", "--account-id", f.account)); diff != "" {
		t.Errorf("audit --account-id (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want[:2], actions("audit", "--account-id", f.account, "--limit", "2")); diff != "" {
		t.Errorf("audit --limit 2 (-want +got):\n%s", diff)
	}
	future := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	if got := actions("audit", "--project-id", f.project, "--since", future); len(got) != 0 {
		t.Errorf("audit --since %s = %v, want no events", future, got)
	}
	// The text output is a table of the same events.
	text := h.must("audit", "--project-id", f.project)
	if !strings.Contains(text, "document_source.add") || !strings.Contains(text, "docs/CONTINUITY_PROTOCOL.md") {
		t.Errorf("audit text output:\n%s", text)
	}
}

// An unreachable database is one plain reason, without the
// store's own prefix repeated ("database unavailable: store: ping: store:
// unavailable" before).
func TestUnavailableDatabaseReason(t *testing.T) {
	t.Parallel()
	env := map[string]string{"HEYAIRA_DATABASE_URL": "postgres://127.0.0.1:1/none?sslmode=disable&connect_timeout=2"}
	_, _, err := runWith(t, env, "list-accounts")
	if err == nil || !strings.HasPrefix(err.Error(), "list-accounts: database unavailable: dial tcp 127.0.0.1:1: ") ||
		strings.Contains(err.Error(), "store:") {
		t.Errorf("err = %v, want list-accounts: database unavailable: dial tcp …, without store:", err)
	}
}

// TestMigrateTellsTheRoleToOwnTheDatabase: on PostgreSQL 15 a role that does
// not own the database cannot create tables in schema public; migrate says
// so in one line, with the statement that fixes it, and then works.
func TestMigrateTellsTheRoleToOwnTheDatabase(t *testing.T) {
	t.Parallel()
	super := storetest.NewURL(t)
	db, err := sql.Open("postgres", super)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	role := fmt.Sprintf("heyaira_%d", time.Now().UnixNano())
	if _, err := db.Exec(`CREATE ROLE ` + role + ` LOGIN`); err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(super)
	u.User = url.User(role)
	env := map[string]string{"HEYAIRA_DATABASE_URL": u.String()}
	_, _, err = runWith(t, env, "migrate")
	if err == nil || !strings.Contains(err.Error(), "the role must own the database") ||
		!strings.Contains(err.Error(), "ALTER DATABASE ") || !strings.Contains(err.Error(), ` OWNER TO "`+role+`"`) {
		t.Fatalf("migrate as a role that does not own the database: %v", err)
	}
	var name string
	db.QueryRow(`SELECT current_database()`).Scan(&name)
	if _, err := db.Exec(`ALTER DATABASE ` + name + ` OWNER TO ` + role); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runWith(t, env, "migrate"); err != nil {
		t.Errorf("migrate once the role owns the database: %v", err)
	}
}
