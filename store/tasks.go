package store

import (
	"context"
	"database/sql"
	"time"
)

// Task is one project task.
type Task struct {
	ID        string    `json:"task_id"`
	ProjectID string    `json:"project_id"`
	Title     string    `json:"title"`
	Body      string    `json:"body"`
	Status    string    `json:"status"`
	CreatedBy string    `json:"created_by"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

const taskColumns = `id::text, project_id::text, title, body, status, created_by, created_at, updated_at`

func scanTask(row sqlScanner) (t Task, err error) {
	err = row.Scan(&t.ID, &t.ProjectID, &t.Title, &t.Body, &t.Status, &t.CreatedBy, &t.CreatedAt, &t.UpdatedAt)
	return t, err
}

const createTaskSQL = `
	INSERT INTO tasks (project_id, title, body, created_by) VALUES ($1, $2, $3, $4)
	RETURNING ` + taskColumns

// CreateTask adds an open task to a project, within its tasks quota (a
// *QuotaError otherwise).
func (db *DB) CreateTask(ctx context.Context, projectID, title, body, createdBy string) (Task, error) {
	return txValue(ctx, db, "create task", func(ctx context.Context, tx *sql.Tx) (Task, error) {
		if err := checkRows(ctx, tx, quotaTasks, "tasks", projectID, DefaultLimits.Tasks); err != nil {
			return Task{}, err
		}
		return scanTask(tx.QueryRowContext(ctx, createTaskSQL, projectID, title, body, createdBy))
	})
}

const getTaskSQL = `SELECT ` + taskColumns + ` FROM tasks WHERE id = $1 AND project_id = $2`

// GetTask returns a task of the project, or ErrNotFound.
func (db *DB) GetTask(ctx context.Context, projectID, taskID string) (Task, error) {
	return queryOne(ctx, db, "get task", scanTask, getTaskSQL, taskID, projectID)
}

// TaskUpdate holds the fields to change; nil fields stay as they are.
type TaskUpdate struct {
	Title, Body, Status *string
}

const updateTaskSQL = `
	UPDATE tasks SET title = COALESCE($3, title), body = COALESCE($4, body),
	       status = COALESCE($5, status), updated_at = now()
	WHERE id = $1 AND project_id = $2
	RETURNING ` + taskColumns

// UpdateTask changes a task of the project, or returns ErrNotFound.
func (db *DB) UpdateTask(ctx context.Context, projectID, taskID string, u TaskUpdate) (Task, error) {
	return queryOne(ctx, db, "update task", scanTask, updateTaskSQL,
		taskID, projectID, u.Title, u.Body, u.Status)
}

// listTasksSQL's $5 bounds the text it sends: it stops at the task with
// which the titles and bodies listed pass $5 bytes, but lists at least two.
// A page cut at $5 bytes (server/pagination.go) needs exactly these: the
// tasks it holds and the one after them, which shows that more follow. The
// rest of the $4 tasks (up to 200 bodies of 64 KiB) are not sent. Each
// ORDER BY names the uuid column: a bare "id" in the outer one would name
// the output column id::text, as it did here before, when every task of the
// project was read and sorted as text to find the first page.
const listTasksSQL = `
	SELECT ` + taskColumns + ` FROM (
		SELECT *, row_number() OVER w AS n,
		       coalesce(sum(octet_length(title) + octet_length(body))
		                OVER (w ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS bytes_before
		FROM tasks
		WHERE project_id = $1 AND id > $2::uuid AND ($3 = '' OR status = $3)
		WINDOW w AS (ORDER BY id)
		ORDER BY id LIMIT $4) t
	WHERE n <= 2 OR bytes_before <= $5
	ORDER BY t.id`

// ListTasks returns up to limit tasks of the project with id after the given
// one (the zero UUID for the first page), optionally with one status, and
// stops once their text passes maxBytes (listTasksSQL).
func (db *DB) ListTasks(ctx context.Context, projectID, status, afterID string, limit, maxBytes int) ([]Task, error) {
	if afterID == "" {
		afterID = "00000000-0000-0000-0000-000000000000"
	}
	return queryAll(ctx, db, "list tasks", scanTask, listTasksSQL, projectID, afterID, status, limit, maxBytes)
}
