package systemtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"heyaira/oauth"
	"heyaira/store"
	"heyaira/store/storetest"
)

// TestOperatingBackupRestore runs docs/operating.md's backup and restore
// with the PostgreSQL tools the guide names, against databases of the test
// cluster (the guide's role and service steps left out): a dump of a live
// database, restored into an empty one and migrated, is the same
// deployment: its tenant is there and its legacy token still authenticates.
func TestOperatingBackupRestore(t *testing.T) {
	t.Parallel()
	bin, err := storetest.PGBin()
	if err != nil {
		storetest.Missing(t, "PostgreSQL binaries: %v", err)
	}
	raw, err := os.ReadFile("docs/operating.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	for _, want := range []string{"pg_dump --format=custom --file=", "pg_restore --no-owner", "heyaira admin migrate"} {
		if !strings.Contains(doc, want) {
			t.Fatalf("docs/operating.md no longer says %q: update this test with it", want)
		}
	}
	src := baseEnv(t, storetest.NewURL(t))
	adminRun(t, src, "migrate")
	tn := adminTenant(t, src, "Backup", "Ada")
	token := str(t, adminRun(t, src, "issue-legacy-token", "--project-id", tn.project, "--name", "before the dump"), "token")

	dump := filepath.Join(t.TempDir(), "heyaira.dump")
	pg := func(tool string, args ...string) {
		t.Helper()
		if out, err := exec.Command(filepath.Join(bin, tool), args...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", tool, err, out)
		}
	}
	pg("pg_dump", "--format=custom", "--file="+dump, src["HEYAIRA_DATABASE_URL"])
	dst := baseEnv(t, storetest.NewURL(t))
	pg("pg_restore", "--no-owner", "--dbname="+dst["HEYAIRA_DATABASE_URL"], dump)
	adminRun(t, dst, "migrate")

	db, err := store.Open(t.Context(), dst["HEYAIRA_DATABASE_URL"])
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	a, err := db.Authenticate(t.Context(), oauth.Hash(token), time.Now())
	if err != nil || a.ProjectID != tn.project {
		t.Errorf("the legacy token after the restore: %+v, %v; want project %s", a, err, tn.project)
	}
}
