package store

import (
	"context"
	"database/sql/driver"

	"github.com/lib/pq"
)

// LiveConnect opens one connection the way Open's pool does (liveconn.go),
// for tests of the wrappers.
func LiveConnect(ctx context.Context, dsn string) (driver.Conn, error) {
	c, err := pq.NewConnector(dsn)
	if err != nil {
		return nil, err
	}
	return liveConnector{c}.Connect(ctx)
}
