package store

import (
	"context"
	"database/sql/driver"
	"fmt"
)

// Not starting a statement on an expired context. database/sql may hand a
// pooled connection to a request at the very moment the request's context
// ends (both are ready; its select picks one). lib/pq then sends the
// statement anyway and, at the same time, a CancelRequest over a second
// connection; when the cancel arrives first, PostgreSQL ignores it, and a
// statement that waits for a lock holds the request until the I/O bound
// (deadline.go) ends it: twice QueryTimeout in all (DB-06,
// docs/security-tests.md). The wrappers below check the context before a
// statement, a preparation or a transaction starts; everything else goes
// straight to lib/pq. The window left is the few microseconds between the
// check and lib/pq's write.

// liveConnector wraps lib/pq's connector.
type liveConnector struct{ driver.Connector }

func (c liveConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	pc, ok := conn.(pqConn)
	if !ok {
		conn.Close()
		return nil, fmt.Errorf("store: the driver's connection (%T) lacks a method liveConn passes on", conn)
	}
	return liveConn{pc}, nil
}

// pqConn is what lib/pq's connection implements, and liveConn passes on.
type pqConn interface {
	driver.Conn
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.QueryerContext
	driver.ExecerContext
	driver.Pinger
	driver.SessionResetter
	driver.Validator
	driver.NamedValueChecker
}

type liveConn struct{ pqConn }

// live runs f unless ctx has already ended.
func live[T any](ctx context.Context, f func() (T, error)) (T, error) {
	if err := ctx.Err(); err != nil {
		var zero T
		return zero, err
	}
	return f()
}

func (c liveConn) QueryContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Rows, error) {
	return live(ctx, func() (driver.Rows, error) { return c.pqConn.QueryContext(ctx, q, args) })
}

func (c liveConn) ExecContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Result, error) {
	return live(ctx, func() (driver.Result, error) { return c.pqConn.ExecContext(ctx, q, args) })
}

func (c liveConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	return live(ctx, func() (driver.Tx, error) { return c.pqConn.BeginTx(ctx, opts) })
}

func (c liveConn) PrepareContext(ctx context.Context, q string) (driver.Stmt, error) {
	return live(ctx, func() (driver.Stmt, error) {
		s, err := c.pqConn.PrepareContext(ctx, q)
		if err != nil {
			return nil, err
		}
		ps, ok := s.(pqStmt)
		if !ok {
			s.Close()
			return nil, fmt.Errorf("store: the driver's statement (%T) lacks a method liveStmt passes on", s)
		}
		return liveStmt{ps}, nil
	})
}

// pqStmt is what lib/pq's prepared statement implements.
type pqStmt interface {
	driver.Stmt
	driver.StmtExecContext
	driver.StmtQueryContext
}

type liveStmt struct{ pqStmt }

func (s liveStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	return live(ctx, func() (driver.Rows, error) { return s.pqStmt.QueryContext(ctx, args) })
}

func (s liveStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	return live(ctx, func() (driver.Result, error) { return s.pqStmt.ExecContext(ctx, args) })
}
