package admin_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"heyaira/admin"

	"github.com/google/go-cmp/cmp"
)

// backdate moves the audit rows of the given actions to 2024 and returns their ids.
func (h *harness) backdate(actions ...string) []any {
	h.t.Helper()
	rows, err := h.db.SQL().QueryContext(h.t.Context(), `UPDATE audit_events SET at = '2024-03-01T00:00:00Z'
		WHERE action = ANY($1) RETURNING id`, "{"+strings.Join(actions, ",")+"}")
	if err != nil {
		h.t.Fatal(err)
	}
	defer rows.Close()
	var ids []any
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			h.t.Fatal(err)
		}
		ids = append(ids, num(itoa(id)))
	}
	return ids
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// jsonLines decodes a JSON-lines export.
func jsonLines(t *testing.T, b []byte) []any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	out := []any{}
	for dec.More() {
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("export line: %v", err)
		}
		out = append(out, v)
	}
	return out
}

// TestAR02PruneAuditCommand: prune-audit --dry-run counts and changes
// nothing; prune-audit --export writes the old rows, exactly as audit --json
// shows them, to a new file and deletes exactly those, with one audit.prune
// row; --export - puts them on stdout and the summary on stderr; an
// existing file is refused; audit-stats shows the table and the last prune.
// Rows AR-01, AR-03 (docs/security-tests.md).
func TestAR02PruneAuditCommand(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	f := h.fixture()
	old := h.backdate("account.create", "project.create")
	var shown struct{ Events []map[string]any }
	h.mustJSON(&shown, "audit", "--account-id", f.account)
	var wantExport []any
	for _, e := range shown.Events {
		if e["action"] == "account.create" || e["action"] == "project.create" {
			wantExport = append(wantExport, e)
		}
	}
	if len(old) != 3 || len(wantExport) != 2 { // two accounts, one with a project
		t.Fatalf("backdated %v; audit shows %d of them", old, len(wantExport))
	}

	dry := h.read("prune-audit", "--before", "2025-01-01", "--dry-run").(map[string]any)
	if dry["rows"] != num("3") || dry["dry_run"] != true || dry["export"] != nil || dry["before"] != "2025-01-01T00:00:00Z" {
		t.Errorf("prune-audit --dry-run = %v", dry)
	}
	if out := h.must("prune-audit", "--before", "2025-01-01", "--dry-run"); !strings.HasPrefix(out,
		"dry run: 3 audit row(s) older than 2025-01-01T00:00:00Z would be pruned (ids ") {
		t.Errorf("prune-audit --dry-run text = %q", out)
	}

	path := filepath.Join(t.TempDir(), "audit-2024.jsonl")
	before := h.counts()
	var got map[string]any
	h.mustJSON(&got, "prune-audit", "--before", "2025-01-01", "--export", path)
	if got["rows"] != num("3") || got["dry_run"] != false || got["export"] != path {
		t.Errorf("prune-audit --json = %v", got)
	}
	before["audit_events"] += 1 - 3
	if diff := cmp.Diff(before, h.counts()); diff != "" {
		t.Errorf("prune-audit changed rows other than its 3 and its audit row (-want +got):\n%s", diff)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	exported := jsonLines(t, b)
	var ids []any
	var mine []any
	for _, e := range exported {
		e := e.(map[string]any)
		ids = append(ids, e["id"])
		if e["account_id"] == f.account {
			mine = append(mine, e)
		}
	}
	if diff := cmp.Diff(old, ids); diff != "" {
		t.Errorf("exported ids (-backdated +exported):\n%s", diff)
	}
	if diff := cmp.Diff(wantExport, mine); diff != "" {
		t.Errorf("exported rows differ from audit --json (-audit +export):\n%s", diff)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("export file mode = %v, %v; want 0600", fi.Mode(), err)
	}

	// The same file again: refused, nothing changed, the file kept as it was.
	before = h.counts()
	_, _, err = h.run("prune-audit", "--before", "2025-01-01", "--export", path)
	if err == nil || errors.Is(err, admin.ErrUsage) || !strings.Contains(err.Error(), "export file "+path+" already exists") {
		t.Errorf("prune-audit onto an existing file: %v", err)
	}
	if diff := cmp.Diff(before, h.counts()); diff != "" {
		t.Errorf("the refused prune changed rows:\n%s", diff)
	}
	if again, _ := os.ReadFile(path); string(again) != string(b) {
		t.Error("the refused prune changed the existing export file")
	}

	// --export -: the rows on stdout, the summary on stderr.
	h.backdate("principal.create")
	stdout, stderr, err := h.run("prune-audit", "--before", "2025-01-01", "--export", "-", "--json")
	if err != nil {
		t.Fatal(err)
	}
	lines := jsonLines(t, []byte(stdout))
	if len(lines) != 2 || lines[0].(map[string]any)["action"] != "principal.create" ||
		lines[1].(map[string]any)["action"] != "principal.create" {
		t.Errorf("prune-audit --export - stdout = %q, want the two principal.create rows", stdout)
	}
	var summary map[string]any
	if err := json.Unmarshal([]byte(stderr), &summary); err != nil || summary["export"] != "-" || summary["rows"] != 2.0 {
		t.Errorf("prune-audit --export - stderr = %q (%v)", stderr, err)
	}

	stats := h.read("audit-stats").(map[string]any)
	last, _ := stats["last_prune"].(map[string]any)
	if stats["rows"] != num(itoa(before["audit_events"]-2+1)) || last["action"] != "audit.prune" ||
		last["details"].(map[string]any)["rows"] != num("2") {
		t.Errorf("audit-stats = %v", stats)
	}
	if out := h.must("audit-stats"); !strings.Contains(out, "last prune") || !strings.Contains(out, "(before 2025-01-01T00:00:00Z, 2 row(s))") {
		t.Errorf("audit-stats text:\n%s", out)
	}
}

// TestAR03PruneAuditRefusals: prune-audit never prunes by default; every
// bad command line is a usage error that writes nothing, not even the
// export file.
// Row AR-02 (docs/security-tests.md).
func TestAR03PruneAuditRefusals(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.fixture()
	path := filepath.Join(t.TempDir(), "export.jsonl")
	future := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"prune-audit"}, "--before is required: prune-audit never prunes by default"},
		{[]string{"prune-audit", "--export", path}, "--before is required"},
		{[]string{"prune-audit", "--before", "2025-01-01"}, "--export is required"},
		{[]string{"prune-audit", "--before", "2025-13-01", "--export", path}, "--before must be a date such as 2026-01-01"},
		{[]string{"prune-audit", "--before", "last year", "--export", path}, "--before must be a date"},
		{[]string{"prune-audit", "--before", future, "--export", path}, "--before must not be in the future"},
		{[]string{"prune-audit", "--before", "2025-01-01", "--export", path, "--dry-run"}, "give --export or --dry-run, not both"},
		{[]string{"prune-audit", "--before", "2025-01-01", "--export", ""}, "--export is required"},
		{[]string{"audit-stats", "--project-id", unknownID}, "flag provided but not defined"},
	} {
		before := h.counts()
		stdout, stderr, err := h.run(c.args...)
		if !errors.Is(err, admin.ErrUsage) || !strings.Contains(err.Error(), c.want) || strings.Count(stderr, "\n") != 1 || stdout != "" {
			t.Errorf("%v: err %v, stderr %q, stdout %q; want one usage line with %q", c.args, err, stderr, stdout, c.want)
		}
		if diff := cmp.Diff(before, h.counts()); diff != "" {
			t.Errorf("%v changed rows:\n%s", c.args, diff)
		}
		if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%v created the export file", c.args)
		}
	}
}
