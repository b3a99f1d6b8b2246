package store

import (
	"context"
	"database/sql"
	"time"
)

// MemoryInfo describes one project memory entry without its content.
type MemoryInfo struct {
	Key       string    `json:"key"`
	Bytes     int       `json:"bytes"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Memory is one project memory entry.
type Memory struct {
	MemoryInfo
	Content string `json:"content"`
}

const putMemorySQL = `
	INSERT INTO memories (project_id, key, content) VALUES ($1, $2, $3)
	ON CONFLICT (project_id, key) DO UPDATE SET content = EXCLUDED.content, updated_at = now()
	RETURNING octet_length(content), updated_at`

// memoryUsageSQL is the project's entry count and bytes, the bytes and
// presence of the entry at key (which a put replaces), and the project's
// two memory limits ($3 and $4 are the defaults).
const memoryUsageSQL = `
	SELECT count(*), COALESCE(sum(octet_length(content)), 0),
	       COALESCE(sum(octet_length(content)) FILTER (WHERE key = $2), 0), COALESCE(bool_or(key = $2), false),
	       COALESCE((SELECT memory_entries FROM project_limits WHERE project_id = $1), $3),
	       COALESCE((SELECT memory_bytes FROM project_limits WHERE project_id = $1), $4)
	FROM memories WHERE project_id = $1`

// PutMemory creates or replaces a memory entry, within the project's
// memory_entries and memory_bytes quotas (a *QuotaError otherwise).
func (db *DB) PutMemory(ctx context.Context, projectID, key, content string) (MemoryInfo, error) {
	m := MemoryInfo{Key: key}
	return result(&m, db.inTx(ctx, "put memory", func(ctx context.Context, tx *sql.Tx) error {
		if err := advisoryLock(ctx, tx, quotaMemory, projectID); err != nil {
			return err
		}
		var n, maxEntries int
		var total, old, maxBytes int64
		var exists bool
		if err := tx.QueryRowContext(ctx, memoryUsageSQL, projectID, key, DefaultLimits.MemoryEntries,
			DefaultLimits.MemoryBytes).Scan(&n, &total, &old, &exists, &maxEntries, &maxBytes); err != nil {
			return err
		}
		switch {
		case !exists && n >= maxEntries:
			return &QuotaError{Quota: "memory_entries", Limit: int64(maxEntries)}
		case total-old+int64(len(content)) > maxBytes:
			return &QuotaError{Quota: "memory_bytes", Limit: maxBytes}
		}
		return tx.QueryRowContext(ctx, putMemorySQL, projectID, key, content).Scan(&m.Bytes, &m.UpdatedAt)
	}))
}

const getMemorySQL = `
	SELECT content, octet_length(content), updated_at FROM memories WHERE project_id = $1 AND key = $2`

// GetMemory returns one entry, or ErrNotFound.
func (db *DB) GetMemory(ctx context.Context, projectID, key string) (Memory, error) {
	return queryOne(ctx, db, "get memory", func(row sqlScanner) (m Memory, err error) {
		m.Key = key
		err = row.Scan(&m.Content, &m.Bytes, &m.UpdatedAt)
		return m, err
	}, getMemorySQL, projectID, key)
}

const deleteMemorySQL = `DELETE FROM memories WHERE project_id = $1 AND key = $2`

// DeleteMemory removes one entry, or returns ErrNotFound.
func (db *DB) DeleteMemory(ctx context.Context, projectID, key string) error {
	ctx, cancel := context.WithTimeout(ctx, QueryTimeout)
	defer cancel()
	n, err := execCount(ctx, db.sql, deleteMemorySQL, projectID, key)
	if err == nil && n == 0 {
		err = ErrNotFound
	}
	return wrap("delete memory", err)
}

const listMemorySQL = `
	SELECT key, octet_length(content), updated_at FROM memories
	WHERE project_id = $1 AND key > $2 AND starts_with(key, $3)
	ORDER BY key LIMIT $4`

// ListMemory returns up to limit entries (without content) whose key starts
// with prefix and sorts after the key after, in key order.
func (db *DB) ListMemory(ctx context.Context, projectID, prefix, after string, limit int) ([]MemoryInfo, error) {
	return queryAll(ctx, db, "list memory", func(row sqlScanner) (m MemoryInfo, err error) {
		err = row.Scan(&m.Key, &m.Bytes, &m.UpdatedAt)
		return m, err
	}, listMemorySQL, projectID, after, prefix, limit)
}
