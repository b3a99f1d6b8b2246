package systemtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"heyaira/oauth"
	"heyaira/store"
	"heyaira/store/storetest"
)

// operatingBlock is the sh block of docs/operating.md that contains marker.
func operatingBlock(t *testing.T, marker string) string {
	t.Helper()
	raw, err := os.ReadFile("docs/operating.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(string(raw), -1) {
		if strings.Contains(b[1], marker) {
			return b[1]
		}
	}
	t.Fatalf("docs/operating.md has no sh block with %q", marker)
	return ""
}

// TestOperatingDatabaseAndBackup runs docs/operating.md's database set-up,
// backup and restore as written, in a PostgreSQL cluster of its own standing
// in for db.internal (so the names are the page's: role and database
// heyaira), with the production binary as `heyaira` on the PATH. Left out:
// the password prompt and the systemctl lines. The role then owns its
// database and migrates; the dump is readable by its owner only; the
// restore moves the old database aside first, and the restored database is
// the same deployment: its legacy token still authenticates.
func TestOperatingDatabaseAndBackup(t *testing.T) {
	t.Parallel()
	pgBin, err := storetest.PGBin()
	if err != nil {
		storetest.Missing(t, "PostgreSQL binaries: %v", err)
	}
	c := storetest.StartOwnCluster(t)
	bin := buildHeyAira(t)
	work := t.TempDir()
	dbURL := "postgres://heyaira@/heyaira?host=" + c.Dir + "&sslmode=disable"
	sh := func(block string) string {
		t.Helper()
		var lines []string
		for _, l := range strings.Split(block, "\n") {
			if !strings.HasPrefix(l, "systemctl ") {
				lines = append(lines, l)
			}
		}
		script := strings.NewReplacer("-h db.internal", "-h "+c.Dir, " --pwprompt", "").Replace(strings.Join(lines, "\n"))
		cmd := exec.CommandContext(t.Context(), "bash", "-euo", "pipefail", "-c", script)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+pgBin+string(os.PathListSeparator)+os.Getenv("PATH"),
			"HEYAIRA_DATABASE_URL="+dbURL)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", script, err, out)
		}
		return string(out)
	}

	sh(operatingBlock(t, "createdb -h db.internal -U postgres --owner=heyaira heyaira"))
	env := baseEnv(t, dbURL)
	adminRun(t, env, "migrate")
	tn := adminTenant(t, env, "Backup", "Ada")
	token := str(t, adminRun(t, env, "issue-legacy-token", "--project-id", tn.project, "--name", "before the dump"), "token")

	sh(operatingBlock(t, "pg_dump --format=custom"))
	dumps, _ := filepath.Glob(filepath.Join(work, "heyaira-*.dump"))
	if len(dumps) != 1 {
		t.Fatalf("the backup made %v", dumps)
	}
	if fi, err := os.Stat(dumps[0]); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the dump's mode: %v, %v; want 0600", fi.Mode().Perm(), err)
	}

	restore := operatingBlock(t, "pg_restore --no-owner")
	restore = regexp.MustCompile(`(?m)^dump=\S+`).ReplaceAllString(restore, "dump="+filepath.Base(dumps[0]))
	if !strings.Contains(restore, "RENAME TO heyaira_before_restore") {
		t.Fatal("the restore no longer moves the old database aside")
	}
	sh(restore)

	db, err := store.Open(t.Context(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	a, err := db.Authenticate(t.Context(), oauth.Hash(token), time.Now())
	if err != nil || a.ProjectID != tn.project {
		t.Errorf("the legacy token after the restore: %+v, %v; want project %s", a, err, tn.project)
	}
	if n := sh(`psql -h db.internal -U postgres -Atc "SELECT count(*) FROM pg_database WHERE datname = 'heyaira_before_restore'"`); strings.TrimSpace(n) != "0" {
		t.Errorf("the database moved aside is still there after the last step: %s", n)
	}
}
