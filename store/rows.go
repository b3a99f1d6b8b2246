package store

import "database/sql"

// sqlScanner is a *sql.Row or *sql.Rows.
type sqlScanner interface {
	Scan(dest ...any) error
}

// collect scans every row with scan and closes rows. The slice is never nil,
// so an empty list encodes as [] rather than null.
func collect[T any](rows *sql.Rows, scan func(sqlScanner) (T, error)) ([]T, error) {
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}
