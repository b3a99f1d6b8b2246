package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Tenant limits. Every project has a GitHub request budget per hour (the
// server counts it, server/githubbudget.go) and storage quotas on memory
// entries (count and bytes), tasks and stored workflows (enforced here).
// A project without a project_limits row, or with a NULL column, has
// DefaultLimits; an administrator changes them with SetProjectLimits.

// Limits are a project's effective limits.
type Limits struct {
	GitHubRequestsHourly int   `json:"github_requests_hourly"`
	MemoryEntries        int   `json:"memory_entries"`
	MemoryBytes          int64 `json:"memory_bytes"`
	Tasks                int   `json:"tasks"`
	Workflows            int   `json:"workflows"`
}

// DefaultLimits are the limits of a project nobody set limits for. The
// reasons for each number are in docs/admin.md ("Tenant limits").
var DefaultLimits = Limits{
	GitHubRequestsHourly: 1000,
	MemoryEntries:        1000,
	MemoryBytes:          16 << 20,
	Tasks:                5000,
	Workflows:            5000,
}

// ErrQuotaExceeded: the write would take the project past one of its
// storage quotas. Nothing was written. The error is a *QuotaError.
var ErrQuotaExceeded = errors.New("store: quota exceeded")

// QuotaError names the quota a write was refused by.
type QuotaError struct {
	Quota string // "memory_entries", "memory_bytes", "tasks" or "workflows"
	Limit int64
}

func (e *QuotaError) Error() string {
	return fmt.Sprintf("store: quota exceeded: the project's %s quota is %d", e.Quota, e.Limit)
}

func (e *QuotaError) Is(target error) bool { return target == ErrQuotaExceeded }

// limitsSQL reads a project's effective limits; $2 to $6 are the defaults.
const limitsSQL = `
	SELECT COALESCE(l.github_requests_hourly, $2), COALESCE(l.memory_entries, $3),
	       COALESCE(l.memory_bytes, $4), COALESCE(l.tasks, $5), COALESCE(l.workflows, $6)
	FROM (SELECT $1::uuid AS project_id) p
	LEFT JOIN project_limits l ON l.project_id = p.project_id`

func projectLimits(ctx context.Context, q querier, projectID string) (l Limits, err error) {
	d := DefaultLimits
	err = q.QueryRowContext(ctx, limitsSQL, projectID, d.GitHubRequestsHourly, d.MemoryEntries,
		d.MemoryBytes, d.Tasks, d.Workflows).Scan(&l.GitHubRequestsHourly, &l.MemoryEntries,
		&l.MemoryBytes, &l.Tasks, &l.Workflows)
	return l, err
}

// quotaKind is the first key of the advisory lock that serializes one
// project's writes of one kind of row while its quota is checked: the check
// counts the rows after the lock is held, so two writers cannot both see
// room for one more. Different kinds and different projects do not wait
// for each other (a hash collision between projects only adds a wait).
type quotaKind int32

const (
	quotaMemory   quotaKind = 0x48a10001
	quotaTasks    quotaKind = 0x48a10002
	quotaWorkflow quotaKind = 0x48a10003
	quotaRequests quotaKind = 0x48a10004 // keyed by principal, not project (oauth_consent.go)
	// lockAllowlist serializes one project's links and document sources
	// while a duplicate is looked for (sources.go, repositories.go): the
	// project and repository row locks those take are shared.
	lockAllowlist quotaKind = 0x48a10005
	lockFamily    quotaKind = 0x48a10006 // a token family (oauth_tokens.go lockTokenScope)
)

// advisoryLock takes the transaction-scoped lock (kind, hash of key).
func advisoryLock(ctx context.Context, tx *sql.Tx, kind quotaKind, key string) error {
	_, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, int32(kind), key)
	return err
}

// checkRows takes the lock of kind in the project and refuses one more row
// of table when the project already has as many as its limit of that name
// (table is also the project_limits column and the quota's name). The count
// and the limit are read in one statement after the lock is held, so the
// lock is held for the count, the insert and the commit only.
func checkRows(ctx context.Context, tx *sql.Tx, kind quotaKind, table, projectID string, def int) error {
	if err := advisoryLock(ctx, tx, kind, projectID); err != nil {
		return err
	}
	var n, max int
	// table is one of our constants, never input.
	q := `SELECT (SELECT count(*) FROM ` + table + ` WHERE project_id = $1),
		COALESCE((SELECT ` + table + ` FROM project_limits WHERE project_id = $1), $2)`
	if err := tx.QueryRowContext(ctx, q, projectID, def).Scan(&n, &max); err != nil {
		return err
	}
	if n >= max {
		return &QuotaError{Quota: table, Limit: int64(max)}
	}
	return nil
}

// LimitsUpdate holds the limits to change; nil fields stay as they are.
type LimitsUpdate struct {
	GitHubRequestsHourly *int
	MemoryEntries        *int
	MemoryBytes          *int64
	Tasks                *int
	Workflows            *int
}

const setLimitsSQL = `
	INSERT INTO project_limits (project_id, github_requests_hourly, memory_entries, memory_bytes, tasks, workflows)
	VALUES ($1, $2, $3, $4, $5, $6)
	ON CONFLICT (project_id) DO UPDATE SET
		github_requests_hourly = COALESCE(EXCLUDED.github_requests_hourly, project_limits.github_requests_hourly),
		memory_entries = COALESCE(EXCLUDED.memory_entries, project_limits.memory_entries),
		memory_bytes = COALESCE(EXCLUDED.memory_bytes, project_limits.memory_bytes),
		tasks = COALESCE(EXCLUDED.tasks, project_limits.tasks),
		workflows = COALESCE(EXCLUDED.workflows, project_limits.workflows),
		updated_at = now()`

// SetProjectLimits changes a project's limits and writes the audit row.
// Lowering a quota below the current usage deletes nothing: further writes
// of that kind are refused until usage is below it again.
func (db *DB) SetProjectLimits(ctx context.Context, projectID string, u LimitsUpdate) (Limits, error) {
	var l Limits
	return result(&l, db.inTx(ctx, "set project limits", func(ctx context.Context, tx *sql.Tx) error {
		p, err := lockProject(ctx, tx, projectID)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, setLimitsSQL, projectID, u.GitHubRequestsHourly, u.MemoryEntries,
			u.MemoryBytes, u.Tasks, u.Workflows); err != nil {
			return err
		}
		if l, err = projectLimits(ctx, tx, projectID); err != nil {
			return err
		}
		return insertAudit(ctx, tx, AuditEvent{Actor: ActorAdmin, Action: "project.limits", ProjectID: p.ID,
			AccountID: p.AccountID, Target: p.ID, Outcome: OutcomeOK, Details: map[string]any{"limits": l}})
	}))
}

// Usage is what a project stores, beside its limits.
type Usage struct {
	ProjectID     string `json:"project_id"`
	Limits        Limits `json:"limits"`
	MemoryEntries int    `json:"memory_entries"`
	MemoryBytes   int64  `json:"memory_bytes"`
	Tasks         int    `json:"tasks"`
	Workflows     int    `json:"workflows"`
}

const usageSQL = `
	SELECT (SELECT count(*) FROM memories WHERE project_id = $1),
	       (SELECT COALESCE(sum(octet_length(content)), 0) FROM memories WHERE project_id = $1),
	       (SELECT count(*) FROM tasks WHERE project_id = $1),
	       (SELECT count(*) FROM workflows WHERE project_id = $1)`

// ProjectUsage returns a project's storage usage and its limits, or a
// *RefusedError (ErrNotFound) for an unknown project.
func (db *DB) ProjectUsage(ctx context.Context, projectID string) (Usage, error) {
	u := Usage{ProjectID: projectID}
	return result(&u, db.inTx(ctx, "project usage", func(ctx context.Context, tx *sql.Tx) (err error) {
		if _, err = lockProject(ctx, tx, projectID); err != nil {
			return err
		}
		if u.Limits, err = projectLimits(ctx, tx, projectID); err != nil {
			return err
		}
		return tx.QueryRowContext(ctx, usageSQL, projectID).Scan(&u.MemoryEntries, &u.MemoryBytes, &u.Tasks,
			&u.Workflows)
	}))
}
