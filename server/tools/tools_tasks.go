package tools

import (
	"context"
	"slices"

	"heyaira/server/mcp"
	"heyaira/store"
)

const (
	maxTaskTitle = 200
	MaxTaskBody  = 64 << 10
)

var taskStatuses = []string{"open", "in_progress", "done", "cancelled"}

// taskTools keep project tasks.
type taskTools struct {
	st    *store.DB
	pages pager
}

func (tk *taskTools) tools() []*mcp.Tool {
	return []*mcp.Tool{
		{Name: "task_create", Title: "Create task", Scope: "tasks:write",
			Description: "Create an open project task with a title (≤ 200 bytes) and an optional body (≤ 64 KiB).",
			ToolArgs:    mcp.Typed(tk.create)},
		{Name: "task_get", Title: "Get task", Scope: "tasks:read", ReadOnly: true,
			Description: "Return one project task.",
			ToolArgs:    mcp.Typed(tk.get)},
		{Name: "task_list", Title: "List tasks", Scope: "tasks:read", ReadOnly: true,
			Description: "List project tasks, optionally with one status; follow next_cursor for more.",
			ToolArgs:    mcp.Typed(tk.list)},
		{Name: "task_update", Title: "Update task", Scope: "tasks:write", Destructive: true,
			Description: "Change a task's title, body or status (open, in_progress, done, cancelled).",
			ToolArgs:    mcp.Typed(tk.update)},
	}
}

var errTaskNotFound = mcp.NewCoded("not_found", "no such task in this project")

type taskCreateArgs struct {
	Title *string `json:"title" arg:"title,required"`
	Body  *string `json:"body" arg:"text"`
}

func (tk *taskTools) create(ctx context.Context, p mcp.Principal, a *taskCreateArgs) (any, error) {
	if err := validTask(a.Title, a.Body, nil); err != nil {
		return nil, err
	}
	return tk.st.CreateTask(ctx, p.Auth.ProjectID, *a.Title, deref(a.Body), p.Subject())
}

type taskGetArgs struct {
	TaskID *string `json:"task_id" arg:"uuid,required"`
}

func (tk *taskTools) get(ctx context.Context, p mcp.Principal, a *taskGetArgs) (any, error) {
	return getTask(ctx, tk.st, p, *a.TaskID)
}

// getTask returns a task of the caller's project; a malformed id is
// answered as an unknown one.
func getTask(ctx context.Context, st *store.DB, p mcp.Principal, id string) (store.Task, error) {
	if !store.IsUUID(id) {
		return store.Task{}, errTaskNotFound
	}
	t, err := st.GetTask(ctx, p.Auth.ProjectID, id)
	return t, mcp.NotFound(err, errTaskNotFound)
}

type taskUpdateArgs struct {
	TaskID *string `json:"task_id" arg:"uuid,required"`
	Title  *string `json:"title" arg:"title"`
	Body   *string `json:"body" arg:"text"`
	Status *string `json:"status" arg:"status"`
}

func (tk *taskTools) update(ctx context.Context, p mcp.Principal, a *taskUpdateArgs) (any, error) {
	if err := validTask(a.Title, a.Body, a.Status); err != nil {
		return nil, err
	}
	if !store.IsUUID(*a.TaskID) {
		return nil, errTaskNotFound
	}
	t, err := tk.st.UpdateTask(ctx, p.Auth.ProjectID, *a.TaskID, store.TaskUpdate{Title: a.Title, Body: a.Body, Status: a.Status})
	return t, mcp.NotFound(err, errTaskNotFound)
}

type taskListArgs struct {
	Status *string `json:"status" arg:"status"`
	Limit  *int    `json:"limit" arg:"limit"`
	Cursor *string `json:"cursor" arg:"cursor"`
}

func (tk *taskTools) list(ctx context.Context, p mcp.Principal, a *taskListArgs) (any, error) {
	if err := validTask(nil, nil, a.Status); err != nil {
		return nil, err
	}
	limit, err := pageSize(a.Limit)
	if err != nil {
		return nil, err
	}
	return listPage(tk.pages, "task_list", p, a.Cursor, limit, "tasks", func(after string) ([]store.Task, error) {
		return tk.st.ListTasks(ctx, p.Auth.ProjectID, deref(a.Status), after, limit, MaxPageBytes)
	}, func(t store.Task) string { return t.ID }, func(t store.Task) int { return len(t.Title) + len(t.Body) })
}

// validTask checks the optional task fields that are present.
func validTask(title, body, status *string) error {
	if title != nil && (len(*title) == 0 || len(*title) > maxTaskTitle) {
		return mcp.InvalidArgument("title must be 1-200 bytes")
	}
	if body != nil && len(*body) > MaxTaskBody {
		return mcp.InvalidArgument("body must be at most 65536 bytes")
	}
	if err := noNUL(deref(title), deref(body)); err != nil {
		return err
	}
	if status != nil && !slices.Contains(taskStatuses, *status) {
		return mcp.InvalidArgument("status must be one of open, in_progress, done, cancelled")
	}
	return nil
}
