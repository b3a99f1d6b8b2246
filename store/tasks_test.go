package store_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"heyaira/store"
)

// ListTasks sends only the tasks a page cut at maxBytes holds, and the one
// after them: a task_list of 200 bodies of 64 KiB no longer reads 12.5 MiB
// out of PostgreSQL to answer 256 KiB. The tasks it sends are the start of
// what an unbounded listing sends, so the page and its next_cursor are
// unchanged.
func TestListTasksSendsABoundedPage(t *testing.T) {
	t.Parallel()
	f := newWFFixture(t)
	ctx := t.Context()
	const n, maxBytes = 10, 256 << 10
	body := strings.Repeat("<", 64<<10)
	for range n {
		if _, err := f.db.CreateTask(ctx, f.foreign, "big", body, "principal:x"); err != nil {
			t.Fatal(err)
		}
	}
	all, err := f.db.ListTasks(ctx, f.foreign, "", "", 200, 1<<30)
	if err != nil || len(all) != n {
		t.Fatalf("unbounded: %d tasks, %v; want %d", len(all), err, n)
	}
	ids := func(ts []store.Task) (out []string) {
		for _, t := range ts {
			out = append(out, t.ID)
		}
		return out
	}
	for _, c := range []struct {
		maxBytes, want int
	}{
		// 4 tasks of 65,539 bytes pass 256 KiB: the page holds 3, and the
		// 4th shows that more follow.
		{maxBytes, 4},
		// The first task alone passes the bound: two are still sent.
		{1, 2},
		{0, 2},
		// Everything fits: nothing is cut.
		{n * (64<<10 + 3), n},
	} {
		got, err := f.db.ListTasks(ctx, f.foreign, "", "", 200, c.maxBytes)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(ids(all[:c.want]), ids(got)); diff != "" {
			t.Errorf("maxBytes %d: tasks (-want +got):\n%s", c.maxBytes, diff)
		}
	}
	// The limit still bounds the rows, and a status filter still applies.
	if got, err := f.db.ListTasks(ctx, f.foreign, "", "", 1, maxBytes); err != nil || len(got) != 1 {
		t.Errorf("limit 1: %d tasks, %v", len(got), err)
	}
	if got, err := f.db.ListTasks(ctx, f.foreign, "done", "", 200, maxBytes); err != nil || len(got) != 0 {
		t.Errorf("status done: %d tasks, %v", len(got), err)
	}
}
