package store_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"heyaira/store"
)

// quotaOf returns the quota a refusal names, or "" for any other outcome.
func quotaOf(err error) string {
	var qe *store.QuotaError
	if errors.As(err, &qe) && errors.Is(err, store.ErrQuotaExceeded) {
		return qe.Quota
	}
	return ""
}

// Row BT-30: per-project storage quotas. Memory entries (count and bytes,
// a replacement counted as the difference), tasks and workflows are refused
// with ErrQuotaExceeded past the project's limit, writing nothing; another
// project is not affected; ProjectUsage shows the counts beside the limits.
func TestBT30StorageQuotas(t *testing.T) {
	t.Parallel()
	f := newWFFixture(t)
	ctx := t.Context()
	if _, err := f.db.SetProjectLimits(ctx, f.project, store.LimitsUpdate{MemoryEntries: ptr(2),
		MemoryBytes: ptr(int64(10)), Tasks: ptr(2), Workflows: ptr(1)}); err != nil {
		t.Fatal(err)
	}
	put := func(project, key, content string) error {
		_, err := f.db.PutMemory(ctx, project, key, content)
		return err
	}
	for _, c := range []struct {
		key, content, quota string
	}{
		{"a", "12345", ""},
		{"b", "1234", ""},
		{"c", "1", "memory_entries"},
		{"b", "123456", "memory_bytes"}, // 5 + 6 > 10
		{"b", "12345", ""},              // a replacement within the bytes
	} {
		if err := put(f.project, c.key, c.content); quotaOf(err) != c.quota || (c.quota == "" && err != nil) {
			t.Errorf("put %s=%q: %v, want quota %q", c.key, c.content, err, c.quota)
		}
	}
	if m, err := f.db.GetMemory(ctx, f.project, "b"); err != nil || m.Content != "12345" {
		t.Errorf("b = %q, %v", m.Content, err)
	}
	if err := put(f.sibling, "c", strings.Repeat("x", 100)); err != nil {
		t.Errorf("another project's put: %v", err)
	}
	// The fixture made one task; one more fits.
	if _, err := f.db.CreateTask(ctx, f.project, "t2", "", "principal:x"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.db.CreateTask(ctx, f.project, "t3", "", "principal:x"); quotaOf(err) != "tasks" {
		t.Errorf("third task: %v, want the tasks quota", err)
	}
	c, err := f.db.DispatchConfig(ctx, f.project, "engineer", "worker")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.db.CreateWorkflow(ctx, f.newWorkflow(t, c)); err != nil {
		t.Fatal(err)
	}
	if _, err := f.db.CreateWorkflow(ctx, f.newWorkflow(t, c)); quotaOf(err) != "workflows" {
		t.Errorf("second workflow: %v, want the workflows quota", err)
	}
	u, err := f.db.ProjectUsage(ctx, f.project)
	if err != nil {
		t.Fatal(err)
	}
	want := store.Usage{ProjectID: f.project, MemoryEntries: 2, MemoryBytes: 10, Tasks: 2, Workflows: 1,
		Limits: store.Limits{GitHubRequestsHourly: store.DefaultLimits.GitHubRequestsHourly,
			MemoryEntries: 2, MemoryBytes: 10, Tasks: 2, Workflows: 1}}
	if u != want {
		t.Errorf("usage = %+v, want %+v", u, want)
	}
	if u, err := f.db.ProjectUsage(ctx, f.sibling); err != nil || u.Limits != store.DefaultLimits {
		t.Errorf("a project without limits: %+v, %v", u, err)
	}
}

// Row BT-31: quotas hold under concurrency. 24 writers at once put 24
// different keys, create 24 tasks and 24 workflows in a project whose
// quotas allow 5 of each: exactly 5 of each succeed, the rest are refused
// with ErrQuotaExceeded, never another error, and the rows are exactly 5.
func TestBT31QuotasAreAtomic(t *testing.T) {
	t.Parallel()
	f := newWFFixture(t)
	ctx := t.Context()
	// The fixture's task is one of the 5.
	if _, err := f.db.SetProjectLimits(ctx, f.project, store.LimitsUpdate{MemoryEntries: ptr(5), Tasks: ptr(5), Workflows: ptr(5)}); err != nil {
		t.Fatal(err)
	}
	c, err := f.db.DispatchConfig(ctx, f.project, "engineer", "worker")
	if err != nil {
		t.Fatal(err)
	}
	writes := map[string]func(i int) error{
		"memory_entries": func(i int) error {
			_, err := f.db.PutMemory(ctx, f.project, fmt.Sprintf("k%d", i), "v")
			return err
		},
		"tasks": func(i int) error {
			_, err := f.db.CreateTask(ctx, f.project, "t", "", "principal:x")
			return err
		},
		"workflows": func(i int) error {
			_, err := f.db.CreateWorkflow(ctx, f.newWorkflow(t, c))
			return err
		},
	}
	want := map[string]int{"memory_entries": 5, "tasks": 4, "workflows": 5}
	for quota, write := range writes {
		var wg sync.WaitGroup
		var mu sync.Mutex
		ok := 0
		for i := range 24 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				err := write(i)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					ok++
				case quotaOf(err) != quota:
					t.Errorf("%s write %d: %v", quota, i, err)
				}
			}()
		}
		wg.Wait()
		if ok != want[quota] {
			t.Errorf("%s: %d concurrent writes succeeded, want %d", quota, ok, want[quota])
		}
	}
	u, err := f.db.ProjectUsage(context.Background(), f.project)
	if err != nil || u.MemoryEntries != 5 || u.Tasks != 5 || u.Workflows != 5 {
		t.Errorf("usage after the race: %+v, %v", u, err)
	}
}
