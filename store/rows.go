package store

import (
	"context"
	"database/sql"
	"errors"
)

// The row plumbing every method shares. Nullable columns scan straight into
// pointer fields (database/sql sets nil for NULL), so no method converts
// sql.Null* values by hand.

// sqlScanner is a *sql.Row or *sql.Rows.
type sqlScanner interface {
	Scan(dest ...any) error
}

// querier is what both *sql.DB and *sql.Tx offer.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// each runs query on q and calls fn for every row.
func each(ctx context.Context, q querier, fn func(sqlScanner) error, query string, args ...any) error {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// all runs query on q and scans every row with scan. The slice is never nil,
// so an empty list encodes as [] rather than null.
func all[T any](ctx context.Context, q querier, scan func(sqlScanner) (T, error), query string,
	args ...any) ([]T, error) {
	out := []T{}
	err := each(ctx, q, func(row sqlScanner) error {
		v, err := scan(row)
		out = append(out, v)
		return err
	}, query, args...)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// queryAll is all on the pool, outside a transaction, under the query
// deadline, with its error wrapped as op.
func queryAll[T any](ctx context.Context, db *DB, op string, scan func(sqlScanner) (T, error), query string,
	args ...any) ([]T, error) {
	ctx, cancel := context.WithTimeout(ctx, QueryTimeout)
	defer cancel()
	out, err := all(ctx, db.sql, scan, query, args...)
	return out, wrap(op, err)
}

// queryOne is queryAll for a statement that returns one row; no row is
// ErrNotFound.
func queryOne[T any](ctx context.Context, db *DB, op string, scan func(sqlScanner) (T, error), query string,
	args ...any) (T, error) {
	ctx, cancel := context.WithTimeout(ctx, QueryTimeout)
	defer cancel()
	v, err := scan(db.sql.QueryRowContext(ctx, query, args...))
	return result(&v, wrap(op, err))
}

// txValue is inTx for a method whose result is what fn returns.
func txValue[T any](ctx context.Context, db *DB, op string,
	fn func(ctx context.Context, tx *sql.Tx) (T, error)) (T, error) {
	var out T
	return result(&out, db.inTx(ctx, op, func(ctx context.Context, tx *sql.Tx) (err error) {
		out, err = fn(ctx, tx)
		return err
	}))
}

// result is what a method returns after its transaction: *out, or the zero
// T and err.
func result[T any](out *T, err error) (T, error) {
	if err != nil {
		var zero T
		return zero, err
	}
	return *out, nil
}

// noRows is the refusal for a statement that matched no row (err is
// sql.ErrNoRows); any other err is returned as it is.
func noRows(err, kind error, format string, args ...any) error {
	if errors.Is(err, sql.ErrNoRows) {
		return refused(kind, format, args...)
	}
	return err
}

// execCount runs a statement and returns the number of rows it changed.
func execCount(ctx context.Context, ex querier, q string, args ...any) (int64, error) {
	res, err := ex.ExecContext(ctx, q, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// errRow is the row of a statement that could not be prepared.
type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

// listIn is all in a transaction that first runs lock (inAccount or
// inProject, or nil), so that the list of an unknown account or project is
// a *RefusedError (ErrNotFound) rather than empty.
func listIn[T any](ctx context.Context, db *DB, op string, lock func(context.Context, *sql.Tx) error,
	scan func(sqlScanner) (T, error), query string, args ...any) ([]T, error) {
	return txValue(ctx, db, op, func(ctx context.Context, tx *sql.Tx) ([]T, error) {
		if lock != nil {
			if err := lock(ctx, tx); err != nil {
				return nil, err
			}
		}
		return all(ctx, tx, scan, query, args...)
	})
}

// inAccount is listIn's lockAccount of id.
func inAccount(id string) func(context.Context, *sql.Tx) error {
	return func(ctx context.Context, tx *sql.Tx) error { return lockAccount(ctx, tx, id) }
}

// inProject is listIn's lockProject of id.
func inProject(id string) func(context.Context, *sql.Tx) error {
	return func(ctx context.Context, tx *sql.Tx) error {
		_, err := lockProject(ctx, tx, id)
		return err
	}
}
