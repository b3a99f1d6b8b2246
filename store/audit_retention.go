package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// This file bounds the audit log, which otherwise only grows. PruneAudit
// hands every row older than a cutoff to a sink (the admin CLI writes JSON
// lines to a file), and only once the sink says they are durable deletes
// them, in the same transaction that read them. AuditStats and
// CountAuditBefore show how big the log is and what a prune would remove.
//
// Why no row can be lost: the transaction is REPEATABLE READ, so the DELETE
// sees exactly the snapshot the export read. A row committed meanwhile is
// invisible to it, and a row deleted meanwhile (a concurrent prune) makes
// the DELETE fail with a serialization error. The DELETE must remove as
// many rows as were exported, or nothing is committed. If the sink fails,
// nothing is deleted. If the commit fails, the rows may be both in the
// export and still in the table: a duplicate, never a loss.

// AuditSink receives the rows PruneAudit exports, oldest (lowest id) first.
type AuditSink interface {
	Export(AuditEvent) error
	// Flush makes every exported row durable (written out and synced).
	// PruneAudit deletes only after Flush returns nil.
	Flush() error
}

// AuditSpan describes a set of audit rows: how many, and their ids and
// times. Its pointers are nil when the set is empty.
type AuditSpan struct {
	Rows     int64      `json:"rows"`
	FirstID  *int64     `json:"first_id"`
	LastID   *int64     `json:"last_id"`
	OldestAt *time.Time `json:"oldest_at"`
	NewestAt *time.Time `json:"newest_at"`
}

// AuditPrune reports what PruneAudit exported and deleted (or, for
// CountAuditBefore, what it would).
type AuditPrune struct {
	Before time.Time `json:"before"`
	AuditSpan
}

// AuditStats is how big the audit log is, and its last prune.
type AuditStats struct {
	AuditSpan
	// Bytes is the table's size on disk, indexes and TOAST included.
	Bytes int64 `json:"bytes"`
	// LastPrune is the newest audit.prune row, nil if none.
	LastPrune *AuditEvent `json:"last_prune"`
}

// retentionTimeout bounds a prune or a count: they read the whole table,
// which only a prune keeps small. The admin CLI runs them alone, as it runs
// Migrate.
const retentionTimeout = 10 * time.Minute

// pruneLock keeps two prunes from running at once (migrate's is 7241690013).
const pruneLock = 7241690014

const (
	auditSpanSQL = `
		SELECT count(*), min(id), max(id), min(at), max(at) FROM audit_events`
	auditSpanBeforeSQL = auditSpanSQL + ` WHERE at < $1`
	auditBeforeSQL     = `
		SELECT ` + auditEventColumns + ` FROM audit_events WHERE at < $1 ORDER BY id`
	deleteAuditSQL = `
		DELETE FROM audit_events WHERE at < $1 AND id BETWEEN $2 AND $3`
	lastPruneSQL = `
		SELECT ` + auditEventColumns + ` FROM audit_events WHERE action = 'audit.prune'
		ORDER BY id DESC LIMIT 1`
)

// PruneAudit exports to sink every audit row with at < before, then deletes
// exactly those rows and writes one audit.prune row (details: before, rows,
// first_id, last_id), in one transaction. It prunes nothing unless the
// sink took every row. A prune already running is a *RefusedError
// (ErrConflict).
func (db *DB) PruneAudit(ctx context.Context, before time.Time, sink AuditSink) (AuditPrune, error) {
	p := AuditPrune{Before: before}
	return result(&p, db.retentionTx(ctx, "prune audit", func(ctx context.Context, tx *sql.Tx) error {
		var locked bool
		if err := tx.QueryRowContext(ctx, `SELECT pg_try_advisory_xact_lock($1)`, pruneLock).Scan(&locked); err != nil {
			return err
		}
		if !locked {
			return refused(ErrConflict, "another prune-audit is running")
		}
		if err := exportAudit(ctx, tx, before, sink, &p.AuditSpan); err != nil {
			return err
		}
		if p.Rows > 0 {
			n, err := execCount(ctx, tx, deleteAuditSQL, before, *p.FirstID, *p.LastID)
			if err != nil {
				return err
			}
			if n != p.Rows {
				return fmt.Errorf("deleted %d audit rows but exported %d: nothing is deleted", n, p.Rows)
			}
		}
		return insertAudit(ctx, tx, AuditEvent{Actor: ActorAdmin, Action: "audit.prune", Target: "audit_events",
			Outcome: OutcomeOK, Details: map[string]any{"before": before, "rows": p.Rows,
				"first_id": p.FirstID, "last_id": p.LastID}})
	}))
}

// exportAudit streams the rows older than before to sink, counting them in
// span, and flushes the sink.
func exportAudit(ctx context.Context, tx *sql.Tx, before time.Time, sink AuditSink, span *AuditSpan) error {
	err := each(ctx, tx, func(row sqlScanner) error {
		e, err := scanAuditEvent(row)
		if err != nil {
			return err
		}
		if err := sink.Export(e); err != nil {
			return fmt.Errorf("export failed, nothing is deleted: %w", err)
		}
		span.add(e)
		return nil
	}, auditBeforeSQL, before)
	if err != nil {
		return err
	}
	if err := sink.Flush(); err != nil {
		return fmt.Errorf("export failed, nothing is deleted: %w", err)
	}
	return nil
}

func (s *AuditSpan) add(e AuditEvent) {
	if s.Rows == 0 {
		s.FirstID, s.OldestAt = &e.ID, &e.At
	}
	s.Rows++
	s.LastID = &e.ID
	if s.NewestAt == nil || e.At.After(*s.NewestAt) {
		s.NewestAt = &e.At
	}
	if e.At.Before(*s.OldestAt) {
		s.OldestAt = &e.At
	}
}

// CountAuditBefore reports what PruneAudit(before) would remove now,
// changing nothing.
func (db *DB) CountAuditBefore(ctx context.Context, before time.Time) (AuditPrune, error) {
	p := AuditPrune{Before: before}
	return result(&p, db.retentionTx(ctx, "count audit", func(ctx context.Context, tx *sql.Tx) error {
		return scanAuditSpan(tx.QueryRowContext(ctx, auditSpanBeforeSQL, before), &p.AuditSpan)
	}))
}

// AuditStats reports the size of the audit log and its last prune.
func (db *DB) AuditStats(ctx context.Context) (AuditStats, error) {
	var s AuditStats
	return result(&s, db.retentionTx(ctx, "audit stats", func(ctx context.Context, tx *sql.Tx) error {
		if err := scanAuditSpan(tx.QueryRowContext(ctx, auditSpanSQL), &s.AuditSpan); err != nil {
			return err
		}
		if err := tx.QueryRowContext(ctx, `SELECT pg_total_relation_size('audit_events')`).Scan(&s.Bytes); err != nil {
			return err
		}
		last, err := all(ctx, tx, scanAuditEvent, lastPruneSQL)
		if len(last) == 1 {
			s.LastPrune = &last[0]
		}
		return err
	}))
}

// scanAuditSpan reads count(*), min(id), max(id), min(at) and max(at): the
// four are NULL, and their pointers nil, when the count is 0.
func scanAuditSpan(row *sql.Row, s *AuditSpan) error {
	return row.Scan(&s.Rows, &s.FirstID, &s.LastID, &s.OldestAt, &s.NewestAt)
}

// retentionTx is longTx for the statements that read the whole audit table,
// REPEATABLE READ.
func (db *DB) retentionTx(ctx context.Context, op string, fn func(ctx context.Context, tx *sql.Tx) error) error {
	return db.longTx(ctx, op, retentionTimeout, &sql.TxOptions{Isolation: sql.LevelRepeatableRead}, fn)
}
