package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"time"
)

// Audit actions and outcome used across the store.
const (
	ActorAdmin = "admin"
	OutcomeOK  = "ok"
)

const insertAuditSQL = `
	INSERT INTO audit_events (actor, action, project_id, account_id, target, outcome, details)
	VALUES ($1, $2, NULLIF($3, '')::uuid, NULLIF($4, '')::uuid, $5, $6, $7)`

// insertAudit writes one audit row, inside the caller's transaction when given one.
// Callers must put only identifiers, sizes, hashes and codes in Details.
func insertAudit(ctx context.Context, ex querier, e AuditEvent) error {
	args, err := auditArgs(e)
	if err != nil {
		return err
	}
	_, err = ex.ExecContext(ctx, insertAuditSQL, args...)
	return err
}

// insertProjectAudit is insertAudit for an event of e.ProjectID, with the
// project's account filled in.
func insertProjectAudit(ctx context.Context, tx *sql.Tx, e AuditEvent) error {
	err := tx.QueryRowContext(ctx, `SELECT account_id FROM projects WHERE id = $1`, e.ProjectID).Scan(&e.AccountID)
	if err != nil {
		return err
	}
	return insertAudit(ctx, tx, e)
}

// auditArgs are insertAuditSQL's arguments for e.
func auditArgs(e AuditEvent) ([]any, error) {
	details := e.Details
	if details == nil {
		details = map[string]any{}
	}
	b, err := json.Marshal(details)
	if err != nil {
		return nil, err
	}
	return []any{e.Actor, e.Action, e.ProjectID, e.AccountID, e.Target, e.Outcome, b}, nil
}

// Audit writes one audit row on its own (for events outside an admin
// transaction, such as a document read), with a prepared statement: one
// round trip (see prepared.go).
func (db *DB) Audit(ctx context.Context, e AuditEvent) error {
	ctx, cancel := context.WithTimeout(ctx, QueryTimeout)
	defer cancel()
	args, err := auditArgs(e)
	if err != nil {
		return wrap("audit", err)
	}
	st, err := db.prepared.stmt(ctx, db.sql, insertAuditSQL)
	if err != nil {
		return wrap("audit", err)
	}
	_, err = st.ExecContext(ctx, args...)
	return wrap("audit", err)
}

const auditEventColumns = `id, at, actor, action, COALESCE(project_id::text, ''), COALESCE(account_id::text, ''),
	       target, outcome, details`

// ListAudit returns up to limit audit events of a project since a time, oldest first.
func (db *DB) ListAudit(ctx context.Context, projectID string, since time.Time, limit int) ([]AuditEvent, error) {
	return queryAll(ctx, db, "list audit", scanAuditEvent, `
		SELECT `+auditEventColumns+` FROM audit_events WHERE project_id = $1 AND at >= $2 ORDER BY id LIMIT $3`,
		projectID, since, limit)
}

// scanAuditEvent reads one row of auditEventColumns.
func scanAuditEvent(sc sqlScanner) (AuditEvent, error) {
	var e AuditEvent
	var details []byte
	if err := sc.Scan(&e.ID, &e.At, &e.Actor, &e.Action, &e.ProjectID, &e.AccountID, &e.Target, &e.Outcome, &details); err != nil {
		return AuditEvent{}, err
	}
	if err := json.Unmarshal(details, &e.Details); err != nil {
		return AuditEvent{}, err
	}
	return e, nil
}
