package tools_test

import (
	"strings"
	"testing"

	"heyaira/server/internal/servertest"
	"heyaira/server/tools"
)

func TestLegacyTokenKeepsMemoryAndTasks(t *testing.T) {
	t.Parallel()
	e := servertest.New(t)
	tn := e.NewTenant("o", "r")
	tok := e.LegacyToken(tn)

	if _, isErr, raw := e.Call(tok, "memory_put", map[string]any{"key": "notes/today", "content": "ship F1"}); isErr {
		t.Fatalf("memory_put: %s", raw)
	}
	sc, isErr, raw := e.Call(tok, "memory_get", map[string]any{"key": "notes/today"})
	if isErr || sc["content"] != "ship F1" || sc["bytes"] != 7.0 {
		t.Fatalf("memory_get: %s", raw)
	}
	task, isErr, raw := e.Call(tok, "task_create", map[string]any{"title": "review", "body": "read the diff"})
	if isErr || task["status"] != "open" {
		t.Fatalf("task_create: %s", raw)
	}
	list, isErr, raw := e.Call(tok, "task_list", map[string]any{})
	if isErr || len(list["tasks"].([]any)) != 1 {
		t.Fatalf("task_list: %s", raw)
	}
	for _, tool := range []string{"git_document_get", "runtime_bootstrap_get", "workflow_dispatch", "workflow_get", "catalog_list"} {
		r := e.RPC(tok, "tools/call", map[string]any{"name": tool, "arguments": map[string]any{}})
		if r.Status != 403 || !strings.Contains(r.Header.Get("WWW-Authenticate"), "insufficient_scope") {
			t.Errorf("legacy token on %s: HTTP %d %s, want 403", tool, r.Status, r.Raw)
		}
	}
}

func TestMemoryTools(t *testing.T) {
	t.Parallel()
	e := servertest.New(t)
	tn := e.NewTenant("o", "r")
	tok := e.Token(tn, "memory:read", "memory:write")
	other := e.Token(e.NewTenant("o", "r"), "memory:read", "memory:write")

	for _, k := range []string{"a", "b/1", "b/2", "b/3", "c"} {
		e.Call(tok, "memory_put", map[string]any{"key": k, "content": "v-" + k})
	}
	e.Call(tok, "memory_put", map[string]any{"key": "a", "content": "replaced"})
	if sc, _, _ := e.Call(tok, "memory_get", map[string]any{"key": "a"}); sc["content"] != "replaced" {
		t.Errorf("put did not replace: %v", sc)
	}
	// Another project sees none of it.
	e.WantCode(other, "memory_get", map[string]any{"key": "a"}, "not_found")

	// Pagination by signed cursor, with a prefix.
	var keys []string
	args := map[string]any{"prefix": "b/", "limit": 2}
	for {
		sc, isErr, raw := e.Call(tok, "memory_list", args)
		if isErr {
			t.Fatalf("memory_list: %s", raw)
		}
		for _, it := range sc["items"].([]any) {
			keys = append(keys, it.(map[string]any)["key"].(string))
			if _, ok := it.(map[string]any)["content"]; ok {
				t.Error("memory_list returns content")
			}
		}
		next, ok := sc["next_cursor"].(string)
		if !ok {
			break
		}
		args = map[string]any{"prefix": "b/", "limit": 2, "cursor": next}
		// The cursor is bound to the caller's project.
		e.WantCode(other, "memory_list", map[string]any{"cursor": next}, "cursor_invalid")
	}
	if strings.Join(keys, ",") != "b/1,b/2,b/3" {
		t.Errorf("listed %v", keys)
	}

	for _, bad := range []map[string]any{
		{"key": "", "content": "x"},
		{"key": "a b", "content": "x"},
		{"key": strings.Repeat("k", 201), "content": "x"},
		{"key": "k", "content": strings.Repeat("x", 65537)},
		{"key": "k"},
		{"key": "k", "content": "x", "extra": 1},
		{"key": "k", "content": "nul\x00"},
	} {
		e.WantCode(tok, "memory_put", bad, "invalid_argument")
	}
	if _, isErr, _ := e.Call(tok, "memory_put", map[string]any{"key": "k", "content": strings.Repeat("x", 65536)}); isErr {
		t.Error("64 KiB content refused")
	}
	e.Call(tok, "memory_delete", map[string]any{"key": "c"})
	e.WantCode(tok, "memory_get", map[string]any{"key": "c"}, "not_found")
	e.WantCode(tok, "memory_delete", map[string]any{"key": "c"}, "not_found")

	// memory:read alone cannot write.
	ro := e.Token(tn, "memory:read")
	if r := e.RPC(ro, "tools/call", map[string]any{"name": "memory_put", "arguments": map[string]any{"key": "z", "content": "z"}}); r.Status != 403 {
		t.Errorf("memory_put with memory:read: HTTP %d", r.Status)
	}
}

func TestTaskTools(t *testing.T) {
	t.Parallel()
	e := servertest.New(t)
	tn := e.NewTenant("o", "r")
	tok := e.Token(tn, "tasks:read", "tasks:write")
	other := e.Token(e.NewTenant("o", "r"), "tasks:read", "tasks:write")

	task, _, _ := e.Call(tok, "task_create", map[string]any{"title": "t1"})
	id := task["task_id"].(string)
	for i := 0; i < 4; i++ {
		e.Call(tok, "task_create", map[string]any{"title": "more"})
	}
	up, isErr, raw := e.Call(tok, "task_update", map[string]any{"task_id": id, "status": "in_progress", "body": "started"})
	if isErr || up["status"] != "in_progress" || up["body"] != "started" || up["title"] != "t1" {
		t.Fatalf("task_update: %s", raw)
	}
	e.WantCode(other, "task_get", map[string]any{"task_id": id}, "not_found")
	e.WantCode(other, "task_update", map[string]any{"task_id": id, "status": "done"}, "not_found")
	e.WantCode(tok, "task_get", map[string]any{"task_id": "nope"}, "not_found")
	e.WantCode(tok, "task_update", map[string]any{"task_id": id, "status": "blocked"}, "invalid_argument")
	e.WantCode(tok, "task_create", map[string]any{"title": ""}, "invalid_argument")
	e.WantCode(tok, "task_create", map[string]any{"title": strings.Repeat("t", 201)}, "invalid_argument")

	sc, _, _ := e.Call(tok, "task_list", map[string]any{"status": "in_progress"})
	if n := len(sc["tasks"].([]any)); n != 1 {
		t.Errorf("task_list in_progress: %d tasks", n)
	}
	seen := 0
	args := map[string]any{"limit": 2}
	for {
		sc, isErr, raw := e.Call(tok, "task_list", args)
		if isErr {
			t.Fatalf("task_list: %s", raw)
		}
		seen += len(sc["tasks"].([]any))
		next, ok := sc["next_cursor"].(string)
		if !ok {
			break
		}
		args = map[string]any{"limit": 2, "cursor": next}
	}
	if seen != 5 {
		t.Errorf("paged through %d tasks, want 5", seen)
	}
}

// A task_list page ends early, with next_cursor, once its titles and bodies
// pass maxPageBytes, so no answer carries 200 bodies of 64 KiB; paging still
// reaches every task. Before, one call with limit 200 over 200 such tasks
// answered 162 MiB.
func TestTaskListPageIsBoundedInBytes(t *testing.T) {
	t.Parallel()
	e := servertest.New(t)
	tok := e.Token(e.NewTenant("o", "r"), "tasks:read", "tasks:write")
	const n = 12
	body := strings.Repeat("<", tools.MaxTaskBody)
	for range n {
		if _, isErr, raw := e.Call(tok, "task_create", map[string]any{"title": "big", "body": body}); isErr {
			t.Fatal(raw)
		}
	}
	seen, pages := 0, 0
	args := map[string]any{"limit": 200}
	for {
		r := e.RPC(tok, "tools/call", map[string]any{"name": "task_list", "arguments": args})
		sc := r.Body["result"].(map[string]any)["structuredContent"].(map[string]any)
		tasks := sc["tasks"].([]any)
		pages++
		if len(tasks)*(tools.MaxTaskBody+3) > tools.MaxPageBytes+tools.MaxTaskBody+3 || len(r.Raw) > 16*tools.MaxPageBytes {
			t.Errorf("page %d: %d tasks in a %d-byte answer", pages, len(tasks), len(r.Raw))
		}
		seen += len(tasks)
		next, ok := sc["next_cursor"].(string)
		if !ok {
			break
		}
		args = map[string]any{"limit": 200, "cursor": next}
	}
	if seen != n || pages < 3 {
		t.Errorf("paged through %d tasks in %d pages, want %d in at least 3", seen, pages, n)
	}
}
