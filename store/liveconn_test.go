package store_test

import (
	"context"
	"database/sql/driver"
	"errors"
	"io"
	"testing"

	"heyaira/store"
	"heyaira/store/storetest"
)

// TestNoStatementOnAnEndedContext (DB-06): a connection handed over as the
// request's context ends starts nothing: no statement, preparation or
// transaction reaches PostgreSQL, and the connection stays good (lib/pq
// would have marked it bad and raced a CancelRequest against the statement).
// Row DB-06 (docs/security-tests.md).
func TestNoStatementOnAnEndedContext(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	conn, err := store.LiveConnect(ctx, storetest.NewURL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	ended, cancel := context.WithCancel(ctx)
	cancel()
	q := conn.(driver.QueryerContext)
	setting := func() string { // what the statements below would have set, if run
		t.Helper()
		rows, err := q.QueryContext(ctx, `SELECT coalesce(current_setting('heyaira.test', true), '')`, nil)
		if err != nil {
			t.Fatalf("the connection after refusals: %v", err)
		}
		defer rows.Close()
		v := make([]driver.Value, 1)
		if err := rows.Next(v); err != nil && err != io.EOF {
			t.Fatal(err)
		}
		s, _ := v[0].(string)
		if b, ok := v[0].([]byte); ok {
			s = string(b)
		}
		return s
	}
	set := `SELECT set_config('heyaira.test', 'ran', false)`
	stmt, err := conn.(driver.ConnPrepareContext).PrepareContext(ctx, set)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stmt.Close() })
	for name, try := range map[string]func() error{
		"query": func() error { _, err := q.QueryContext(ended, set, nil); return err },
		"exec": func() error {
			_, err := conn.(driver.ExecerContext).ExecContext(ended, `SET heyaira.test = 'ran'`, nil)
			return err
		},
		"prepare":  func() error { _, err := conn.(driver.ConnPrepareContext).PrepareContext(ended, set); return err },
		"begin":    func() error { _, err := conn.(driver.ConnBeginTx).BeginTx(ended, driver.TxOptions{}); return err },
		"prepared": func() error { _, err := stmt.(driver.StmtQueryContext).QueryContext(ended, nil); return err },
		"prepared exec": func() error {
			_, err := stmt.(driver.StmtExecContext).ExecContext(ended, nil)
			return err
		},
	} {
		if err := try(); !errors.Is(err, context.Canceled) {
			t.Errorf("%s on an ended context = %v, want context.Canceled", name, err)
		}
		if got := setting(); got != "" {
			t.Fatalf("%s on an ended context ran: heyaira.test = %q", name, got)
		}
	}
	// And the same statement on a live context runs, on the same connection.
	rows, err := stmt.(driver.StmtQueryContext).QueryContext(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	rows.Close()
	if got := setting(); got != "ran" {
		t.Errorf("the live statement left heyaira.test = %q, want ran", got)
	}
}
