package store

import (
	"database/sql/driver"

	"github.com/lib/pq"
)

// stringArray scans and writes PostgreSQL text[] columns.
type stringArray []string

// Scan implements sql.Scanner.
func (a *stringArray) Scan(src any) error {
	var s pq.StringArray
	if err := s.Scan(src); err != nil {
		return err
	}
	*a = []string(s)
	return nil
}

// Value implements driver.Valuer.
func (a stringArray) Value() (driver.Value, error) {
	return pq.StringArray(a).Value()
}
