package store

import (
	"context"
	"database/sql"
	"sync"
)

// preparedStmts holds the statements that run on every MCP request: the
// bearer check, alone or authorizing a document read with its audit row
// (read_authorize.go), the source lookup, and the audit row of a read that
// failed after its authorization. Unprepared, lib/pq sends each of them
// as an unnamed statement that PostgreSQL parses and plans on every call, in
// two round trips (Parse/Describe, then Bind/Execute); measured on loopback
// that was 0.6-0.7 ms for the bearer check alone. Prepared, each call is one
// round trip (Bind/Execute) with the plan cached: about 0.12 ms
// (store/bench_test.go). database/sql prepares a statement once on each
// connection that runs it and again on a replacement after a reconnect.
//
// Statements are prepared on first use, outside the lock, so a database that
// is down makes each caller fail at its own deadline rather than queue
// behind another's attempt; a failed preparation is not remembered.
type preparedStmts struct {
	mu    sync.Mutex
	stmts map[string]*sql.Stmt
}

// stmt returns query prepared on db.
func (p *preparedStmts) stmt(ctx context.Context, db *sql.DB, query string) (*sql.Stmt, error) {
	p.mu.Lock()
	st := p.stmts[query]
	p.mu.Unlock()
	if st != nil {
		return st, nil
	}
	st, err := db.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if old := p.stmts[query]; old != nil { // prepared meanwhile by another call
		st.Close()
		return old, nil
	}
	if p.stmts == nil {
		p.stmts = map[string]*sql.Stmt{}
	}
	p.stmts[query] = st
	return st, nil
}

// close closes every statement; the pool is closed after it.
func (p *preparedStmts) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, st := range p.stmts {
		st.Close()
	}
	p.stmts = nil
}

// queryRow runs a prepared query that returns one row. A failed preparation
// is the error of the row's Scan.
func (db *DB) queryRow(ctx context.Context, query string, args ...any) sqlScanner {
	st, err := db.prepared.stmt(ctx, db.sql, query)
	if err != nil {
		return errRow{err}
	}
	return st.QueryRowContext(ctx, args...)
}

// scanPrepared scans the one row of the prepared statement query into dests,
// under the query deadline, with its error wrapped as op.
func (db *DB) scanPrepared(ctx context.Context, op string, dests []any, query string, args ...any) error {
	ctx, cancel := context.WithTimeout(ctx, QueryTimeout)
	defer cancel()
	return wrap(op, db.queryRow(ctx, query, args...).Scan(dests...))
}
