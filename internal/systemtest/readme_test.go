package systemtest

import (
	"database/sql"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"heyaira/store/storetest"
)

// TestReadmeAdminQuickStart runs the README's administration quick-start as
// written, with the production binary as heyaira-admin on the PATH and a
// real commit SHA for the placeholder: from nothing to a person who is a
// member of a project with one allowlisted document, and their sign-in link.
func TestReadmeAdminQuickStart(t *testing.T) {
	t.Parallel()
	section := readmeSection(t, "Administration quick-start")
	block := regexp.MustCompile("(?s)```sh\n(.*?)```").FindStringSubmatch(section)
	if block == nil || strings.Count(block[1], "heyaira-admin ") != 7 {
		t.Fatalf("the quick-start is not one sh block of seven commands: %v", block)
	}
	script := strings.ReplaceAll(block[1], "<40-character-commit-sha>", strings.Repeat("ab", 20))
	env := baseEnv(t, storetest.NewMigratedURL(t))
	cmd := exec.CommandContext(t.Context(), "bash", "-euo", "pipefail", "-c", script)
	cmd.Env = append(os.Environ(), "PATH="+buildHeyAira(t)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"HEYAIRA_DATABASE_URL="+env["HEYAIRA_DATABASE_URL"], "HEYAIRA_CURSOR_KEY_FILE="+env["HEYAIRA_CURSOR_KEY_FILE"],
		"HEYAIRA_PUBLIC_URL=http://127.0.0.1:8080")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if !signinLinkRE.MatchString(lines[len(lines)-1]) {
		t.Errorf("the quick-start did not end with a sign-in link:\n%s", out)
	}
	db, err := sql.Open("postgres", env["HEYAIRA_DATABASE_URL"])
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var members, sources int
	db.QueryRow(`SELECT (SELECT count(*) FROM project_members), (SELECT count(*) FROM document_sources)`).Scan(&members, &sources)
	if members != 1 || sources != 1 {
		t.Errorf("after the quick-start: %d memberships and %d document sources, want 1 and 1", members, sources)
	}
}
