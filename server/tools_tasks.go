package server

import (
	"context"
	"encoding/json"
	"errors"

	"heyaira/store"
)

const (
	maxTaskTitle = 200
	maxTaskBody  = 64 << 10
)

var taskStatuses = []string{"open", "in_progress", "done", "cancelled"}

// taskTools keep project tasks.
type taskTools struct {
	st    *store.DB
	pages pager
}

var (
	schemaTitle  = map[string]any{"type": "string", "minLength": 1, "maxLength": maxTaskTitle}
	schemaBody   = map[string]any{"type": "string"}
	schemaStatus = map[string]any{"type": "string", "enum": taskStatuses}
)

func (tk *taskTools) tools() []*tool {
	return []*tool{
		{name: "task_create", title: "Create task", scope: "tasks:write",
			description: "Create an open project task with a title (≤ 200 bytes) and an optional body (≤ 64 KiB).",
			args:        []toolArg{{"title", schemaTitle}, {"body", schemaBody}},
			required:    []string{"title"}, handle: tk.create},
		{name: "task_get", title: "Get task", scope: "tasks:read", readOnly: true,
			description: "Return one project task.",
			args:        []toolArg{{"task_id", schemaUUID}}, required: []string{"task_id"}, handle: tk.get},
		{name: "task_list", title: "List tasks", scope: "tasks:read", readOnly: true,
			description: "List project tasks, optionally with one status; follow next_cursor for more.",
			args: []toolArg{{"status", schemaStatus}, {"limit", schemaLimit},
				{"cursor", schemaCursor}}, handle: tk.list},
		{name: "task_update", title: "Update task", scope: "tasks:write",
			description: "Change a task's title, body or status (open, in_progress, done, cancelled).",
			args: []toolArg{{"task_id", schemaUUID}, {"title", schemaTitle}, {"body", schemaBody},
				{"status", schemaStatus}}, required: []string{"task_id"}, handle: tk.update},
	}
}

var errTaskNotFound = newCoded("not_found", "no such task in this project")

func (tk *taskTools) create(ctx context.Context, p principal, raw json.RawMessage) (any, error) {
	var a struct {
		Title *string `json:"title"`
		Body  *string `json:"body"`
	}
	if err := decodeObject(raw, []string{"title", "body"}, &a); err != nil {
		return nil, invalidArgument(err.Error())
	}
	if a.Title == nil {
		return nil, invalidArgument("title is required")
	}
	if err := validTask(a.Title, a.Body, nil); err != nil {
		return nil, err
	}
	return tk.st.CreateTask(ctx, p.auth.ProjectID, *a.Title, deref(a.Body), p.subject())
}

func (tk *taskTools) get(ctx context.Context, p principal, raw json.RawMessage) (any, error) {
	var a struct {
		TaskID *string `json:"task_id"`
	}
	if err := decodeObject(raw, []string{"task_id"}, &a); err != nil {
		return nil, invalidArgument(err.Error())
	}
	if a.TaskID == nil {
		return nil, invalidArgument("task_id is required")
	}
	if !uuidRE.MatchString(*a.TaskID) {
		return nil, errTaskNotFound
	}
	t, err := tk.st.GetTask(ctx, p.auth.ProjectID, *a.TaskID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errTaskNotFound
	}
	return t, err
}

func (tk *taskTools) update(ctx context.Context, p principal, raw json.RawMessage) (any, error) {
	var a struct {
		TaskID *string `json:"task_id"`
		Title  *string `json:"title"`
		Body   *string `json:"body"`
		Status *string `json:"status"`
	}
	if err := decodeObject(raw, []string{"task_id", "title", "body", "status"}, &a); err != nil {
		return nil, invalidArgument(err.Error())
	}
	if a.TaskID == nil {
		return nil, invalidArgument("task_id is required")
	}
	if err := validTask(a.Title, a.Body, a.Status); err != nil {
		return nil, err
	}
	if !uuidRE.MatchString(*a.TaskID) {
		return nil, errTaskNotFound
	}
	t, err := tk.st.UpdateTask(ctx, p.auth.ProjectID, *a.TaskID, store.TaskUpdate{Title: a.Title, Body: a.Body, Status: a.Status})
	if errors.Is(err, store.ErrNotFound) {
		return nil, errTaskNotFound
	}
	return t, err
}

func (tk *taskTools) list(ctx context.Context, p principal, raw json.RawMessage) (any, error) {
	var a struct {
		Status *string `json:"status"`
		Limit  *int    `json:"limit"`
		Cursor *string `json:"cursor"`
	}
	if err := decodeObject(raw, []string{"status", "limit", "cursor"}, &a); err != nil {
		return nil, invalidArgument(err.Error())
	}
	if err := validTask(nil, nil, a.Status); err != nil {
		return nil, err
	}
	limit, err := pageSize(a.Limit)
	if err != nil {
		return nil, err
	}
	after, err := tk.pages.after("task_list", p, a.Cursor)
	if err != nil {
		return nil, err
	}
	tasks, err := tk.st.ListTasks(ctx, p.auth.ProjectID, deref(a.Status), after, limit)
	if err != nil {
		return nil, err
	}
	out := map[string]any{"tasks": tasks}
	if len(tasks) > 0 {
		if next := tk.pages.next("task_list", p, len(tasks), limit, tasks[len(tasks)-1].ID); next != "" {
			out["next_cursor"] = next
		}
	}
	return out, nil
}

// validTask checks the optional task fields that are present.
func validTask(title, body, status *string) error {
	if title != nil && (len(*title) == 0 || len(*title) > maxTaskTitle) {
		return invalidArgument("title must be 1-200 bytes")
	}
	if body != nil && len(*body) > maxTaskBody {
		return invalidArgument("body must be at most 65536 bytes")
	}
	for _, s := range []*string{title, body} {
		if s != nil {
			if err := noNUL(*s); err != nil {
				return err
			}
		}
	}
	if status != nil && !contains(taskStatuses, *status) {
		return invalidArgument("status must be one of open, in_progress, done, cancelled")
	}
	return nil
}
