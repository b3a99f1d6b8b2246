// Package store keeps HeyAira's state in PostgreSQL.
//
// It is the only package that speaks SQL. Every query is a Go string with $n
// placeholders (never text built from input), runs under a deadline, and every
// change of more than one row runs in one transaction. lib/pq errors are
// translated at this boundary into the sentinels below, so callers map them to
// stable codes without knowing the driver.
//
// Secrets never reach the store in the clear: callers pass SHA-256 hashes of
// tokens, codes and links, and the store compares hashes only.
package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/lib/pq"
)

// Sentinel errors returned (wrapped) by every method of DB.
var (
	// ErrNotFound: the row does not exist, or is not visible to the caller.
	ErrNotFound = errors.New("store: not found")
	// ErrConflict: a unique or concurrent-update rule refused the change.
	ErrConflict = errors.New("store: conflict")
	// ErrInvalid: a CHECK or foreign-key rule of schema.sql refused the change.
	ErrInvalid = errors.New("store: invalid")
	// ErrUnavailable: the database could not answer (down, overloaded, timed out).
	ErrUnavailable = errors.New("store: unavailable")
	// ErrSchemaMissing: the database has not been migrated (run `heyaira-admin migrate`).
	ErrSchemaMissing = errors.New("store: schema missing")
)

// QueryTimeout bounds every single query or transaction. A query that waits
// longer (a lock, an overloaded or unreachable server) fails with
// ErrUnavailable, which clients see as store_unavailable (docs/design.md,
// "Decisions").
const QueryTimeout = 3 * time.Second

// DefaultMaxConns bounds the pool's connections, open and idle alike, unless
// the operator sets another bound (SetMaxConns; HEYAIRA_DB_MAX_CONNS). A few
// busy backends per PostgreSQL core do more than many: requests beyond the
// bound wait in the pool, within QueryTimeout, not in PostgreSQL. Not 8,
// though 8 costs the least CPU per read: the pool is shared by every
// principal, and with 8 one principal's eight concurrent calls made
// another's wait (LD-04). The figures: docs/design.md, "Decisions".
const DefaultMaxConns = 16

// DB is a pool of connections to one PostgreSQL database.
type DB struct {
	sql      *sql.DB
	dialer   *deadlineDialer
	prepared preparedStmts // the statements of every MCP request (prepared.go)
}

// SetMaxConns bounds the pool at n connections, open and idle alike. As
// many idle as open: with fewer, a connection beyond the idle cap is closed
// when returned and reopened for the next request, and under concurrent
// reads PostgreSQL spends its time forking and ending backends.
func (db *DB) SetMaxConns(n int) {
	db.sql.SetMaxOpenConns(n)
	db.sql.SetMaxIdleConns(n)
}

// Open connects to the database at dsn, sets pool limits and checks that it answers.
func Open(ctx context.Context, dsn string) (*DB, error) {
	conn, err := pq.NewConnector(dsn)
	if err != nil {
		// The DSN may hold a password: do not echo it.
		return nil, errors.New("store: invalid database URL")
	}
	dialer := newDeadlineDialer()
	conn.Dialer(dialer)                    // bounds every wait on the server: see ioTimeout
	sdb := sql.OpenDB(liveConnector{conn}) // see liveconn.go
	db := &DB{sql: sdb, dialer: dialer}
	db.SetMaxConns(DefaultMaxConns)
	sdb.SetConnMaxLifetime(30 * time.Minute)
	// An idle connection is a PostgreSQL backend kept for nothing: after a
	// burst, the pool shrinks back within a minute or two (the cleaner runs
	// once per idle time), as the GitHub transport's does (90 s).
	sdb.SetConnMaxIdleTime(time.Minute)
	if err := db.Ping(ctx); err != nil {
		sdb.Close()
		return nil, err
	}
	return db, nil
}

// Close closes the pool.
func (db *DB) Close() error {
	db.prepared.close()
	return db.sql.Close()
}

// SQL returns the underlying pool, for tests and metrics only.
func (db *DB) SQL() *sql.DB { return db.sql }

// Ping reports whether the database answers.
func (db *DB) Ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, QueryTimeout)
	defer cancel()
	return wrap("ping", db.sql.PingContext(ctx))
}

// Migrate applies schema, which must be idempotent, in a single transaction.
// A role that may not create tables in schema public (SQLSTATE 42501: since
// PostgreSQL 15 only the database's owner may, by default) is told the one
// statement that fixes it.
func (db *DB) Migrate(ctx context.Context, schema string) error {
	// The schema is one long statement: let its answer take as long as the migration may.
	err := db.longTx(ctx, "migrate", 60*time.Second, nil, func(ctx context.Context, tx *sql.Tx) error {
		// No arguments: lib/pq uses the simple protocol, so the multi-statement file runs as one.
		_, err := tx.ExecContext(ctx, schema)
		return err
	})
	var pe *pq.Error
	if errors.As(err, &pe) && pe.Code == "42501" {
		var database, role string
		db.sql.QueryRowContext(ctx, `SELECT current_database(), current_user`).Scan(&database, &role)
		return refused(ErrInvalid, "role %s may not create tables in database %s (permission denied for schema public): "+
			"the role must own the database; as a superuser run ALTER DATABASE %s OWNER TO %s",
			role, database, pq.QuoteIdentifier(database), pq.QuoteIdentifier(role))
	}
	return err
}

// CheckSchema returns ErrSchemaMissing unless schema.sql has been applied.
func (db *DB) CheckSchema(ctx context.Context) error {
	ok, err := queryOne(ctx, db, "check schema", func(row sqlScanner) (ok bool, err error) {
		err = row.Scan(&ok)
		return ok, err
	}, `SELECT to_regclass('heyaira_schema') IS NOT NULL AND to_regclass('audit_events') IS NOT NULL`)
	if err == nil && !ok {
		err = ErrSchemaMissing
	}
	return err
}

// inTx runs fn in a transaction under the query deadline and commits if fn succeeds.
func (db *DB) inTx(ctx context.Context, op string, fn func(ctx context.Context, tx *sql.Tx) error) error {
	return db.txWith(ctx, op, QueryTimeout, nil, fn)
}

// longTx is txWith for the statements that the admin CLI runs alone: timeout
// also bounds each wait on the connection (ioTimeout) meanwhile.
func (db *DB) longTx(ctx context.Context, op string, timeout time.Duration, opts *sql.TxOptions,
	fn func(ctx context.Context, tx *sql.Tx) error) error {
	db.dialer.timeout.Store(int64(timeout))
	defer db.dialer.timeout.Store(int64(ioTimeout))
	return db.txWith(ctx, op, timeout, opts, fn)
}

// txWith is inTx with a timeout and transaction options of the caller's.
func (db *DB) txWith(ctx context.Context, op string, timeout time.Duration, opts *sql.TxOptions,
	fn func(ctx context.Context, tx *sql.Tx) error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tx, err := db.sql.BeginTx(ctx, opts)
	if err != nil {
		return wrap(op, err)
	}
	defer tx.Rollback()
	if err := fn(ctx, tx); err != nil {
		return wrap(op, err)
	}
	return wrap(op, tx.Commit())
}

// wrap translates a driver error into a store sentinel, prefixed with op.
// Errors that already carry a sentinel pass through unchanged.
func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	for _, s := range []error{ErrNotFound, ErrConflict, ErrInvalid, ErrUnavailable, ErrSchemaMissing, ErrQuotaExceeded} {
		if errors.Is(err, s) {
			return err
		}
	}
	var sentinel error
	var pqErr *pq.Error
	var netErr net.Error
	switch {
	case errors.Is(err, sql.ErrNoRows):
		sentinel = ErrNotFound
	case errors.As(err, &pqErr):
		sentinel = classifyPQ(pqErr)
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, driver.ErrBadConn),
		errors.Is(err, sql.ErrConnDone), errors.As(err, &netErr),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		sentinel = ErrUnavailable
	}
	if sentinel == nil {
		return fmt.Errorf("store: %s: %w", op, err) // a bug, or a cancelled request: "internal"
	}
	return &OpError{Op: op, Kind: sentinel, Cause: err}
}

// OpError is a store failure the caller can act on: the operation, its
// sentinel (Unwrap) and what the driver said. It prints "store: <op>:
// <kind> (<cause>)" with "store:" once, e.g. "store: ping: unavailable (dial
// tcp 127.0.0.1:5432: connect: connection refused)".
type OpError struct {
	Op    string
	Kind  error // one of the sentinels
	Cause error // the driver's error; not unwrapped
}

func (e *OpError) Error() string {
	return "store: " + e.Op + ": " + strings.TrimPrefix(e.Kind.Error(), "store: ") + " (" + e.Cause.Error() + ")"
}

func (e *OpError) Unwrap() error { return e.Kind }

// classifyPQ maps a PostgreSQL SQLSTATE to a sentinel.
// https://www.postgresql.org/docs/current/errcodes-appendix.html
func classifyPQ(e *pq.Error) error {
	switch {
	case e.Code == "23505", e.Code == "40001", e.Code == "40P01": // unique, serialization, deadlock
		return ErrConflict
	case e.Code == "23503", e.Code == "23514", e.Code == "23502", e.Code == "22P02", e.Code == "22001":
		return ErrInvalid // foreign key, check, not null, bad text representation, too long
	case e.Code == "42P01": // undefined table
		return ErrSchemaMissing
	case e.Code.Class() == "08", e.Code.Class() == "53", e.Code.Class() == "57": // connection, resources, operator intervention
		return ErrUnavailable
	default:
		return nil // our own SQL is wrong: not a condition the caller can act on
	}
}
