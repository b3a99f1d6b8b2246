package admin_test

import (
	"strings"
	"testing"
)

// Row BT-33: set-project-limits and project-usage. Limits are checked
// before the database is opened (a refused command writes nothing), an
// accepted change writes one audit row, and project-usage shows the stored
// counts beside the effective limits, defaults included.
func TestBT33LimitCommands(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	f := h.fixture()
	before := h.counts()
	for _, args := range [][]string{
		{"--project-id", f.project},
		{"--project-id", f.project, "--tasks", "-1"},
		{"--project-id", f.project, "--github-requests-per-hour", "0"},
		{"--project-id", "nope", "--tasks", "3"},
	} {
		if _, _, err := h.run(append([]string{"set-project-limits"}, args...)...); err == nil {
			t.Errorf("set-project-limits %v accepted", args)
		}
	}
	if _, _, err := h.run("set-project-limits", "--project-id", "00000000-0000-0000-0000-000000000001", "--tasks", "3"); err == nil ||
		!strings.Contains(err.Error(), "not found") {
		t.Errorf("unknown project: %v", err)
	}
	if after := h.counts(); after["project_limits"] != before["project_limits"] || after["audit_events"] != before["audit_events"] {
		t.Errorf("refused commands wrote rows: %v -> %v", before, after)
	}
	var set struct {
		Limits map[string]int64 `json:"limits"`
	}
	h.mustJSON(&set, "set-project-limits", "--project-id", f.project, "--github-requests-per-hour", "50", "--tasks", "3")
	if set.Limits["github_requests_hourly"] != 50 || set.Limits["tasks"] != 3 || set.Limits["memory_entries"] != 1000 {
		t.Errorf("limits after set: %v", set.Limits)
	}
	h.must("set-project-limits", "--project-id", f.project, "--memory-bytes", "4096")
	if n := h.auditCount() - before["audit_events"]; n != 2 {
		t.Errorf("%d audit rows for two changes", n)
	}
	if _, err := h.db.PutMemory(t.Context(), f.project, "k", "four"); err != nil {
		t.Fatal(err)
	}
	var u struct {
		Limits        map[string]int64 `json:"limits"`
		MemoryEntries int64            `json:"memory_entries"`
		MemoryBytes   int64            `json:"memory_bytes"`
	}
	h.mustJSON(&u, "project-usage", "--project-id", f.project)
	if u.MemoryEntries != 1 || u.MemoryBytes != 4 || u.Limits["memory_bytes"] != 4096 || u.Limits["tasks"] != 3 ||
		u.Limits["github_requests_hourly"] != 50 {
		t.Errorf("usage = %+v", u)
	}
	text := h.must("project-usage", "--project-id", f.project)
	for _, want := range []string{"memory-bytes", "4", "4096", "tasks", "github-requests-per-hour"} {
		if !strings.Contains(text, want) {
			t.Errorf("project-usage text lacks %q:\n%s", want, text)
		}
	}
}
