package store

import "context"

// auditSizeSQL is what the audit table holds, cheaply: PostgreSQL's own
// estimate of its rows (pg_class.reltuples, kept by autovacuum and ANALYZE;
// -1 before the first) and its size on disk. No row is read, so a scrape
// can ask it every time.
const auditSizeSQL = `
	SELECT c.reltuples::bigint, pg_total_relation_size(c.oid)
	FROM pg_class c WHERE c.oid = 'audit_events'::regclass`

// AuditSize returns the audit table's estimated row count and its bytes on
// disk, for the metrics of its growth (audit-stats counts exactly).
func (db *DB) AuditSize(ctx context.Context) (rows, bytes int64, err error) {
	err = db.scanPrepared(ctx, "audit size", []any{&rows, &bytes}, auditSizeSQL)
	return rows, bytes, err
}
