package store_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"heyaira/store"

	"github.com/google/go-cmp/cmp"
)

// sink is a store.AuditSink that keeps the rows, and can fail or run a
// step when the first row arrives.
type sink struct {
	rows       []store.AuditEvent
	failExport bool
	failFlush  bool
	onFirst    func()
}

func (s *sink) Export(e store.AuditEvent) error {
	if len(s.rows) == 0 && s.onFirst != nil {
		s.onFirst()
	}
	if s.failExport && len(s.rows) == 1 {
		return errors.New("disk full")
	}
	s.rows = append(s.rows, e)
	return nil
}

func (s *sink) Flush() error {
	if s.failFlush {
		return errors.New("fsync failed")
	}
	return nil
}

var oldTime = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)

// oldAuditRow inserts, through ex, an audit row dated 2020 and returns its id.
func oldAuditRow(t *testing.T, ex interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, action string) int64 {
	t.Helper()
	var id int64
	if err := ex.QueryRowContext(t.Context(), `INSERT INTO audit_events (at, actor, action, outcome)
		VALUES ($1, 'test', $2, 'ok') RETURNING id`, oldTime, action).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

func auditIDs(t *testing.T, db *store.DB) map[int64]bool {
	t.Helper()
	rows, err := db.SQL().QueryContext(t.Context(), `SELECT id FROM audit_events`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[int64]bool{}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		out[id] = true
	}
	return out
}

// TestAR01PruneAuditLosesNoRow: PruneAudit deletes exactly the rows its sink
// took, never one it did not export: a row older than the cutoff that
// commits while the export runs (its id inside the exported range) stays.
// A failing sink deletes nothing; a running prune refuses a second.
func TestAR01PruneAuditLosesNoRow(t *testing.T) {
	t.Parallel()
	tr := newTree(t)
	ctx := t.Context()
	cutoff := oldTime.AddDate(1, 0, 0)
	first := oldAuditRow(t, tr.db.SQL(), "test.first")
	late, err := tr.db.SQL().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer late.Rollback()
	lateID := oldAuditRow(t, late, "test.late") // its id is taken now, its row commits during the export
	last := oldAuditRow(t, tr.db.SQL(), "test.last")

	for _, s := range []*sink{{failExport: true}, {failFlush: true}} {
		before := auditIDs(t, tr.db)
		if _, err := tr.db.PruneAudit(ctx, cutoff, s); err == nil {
			t.Errorf("PruneAudit with a failing sink %+v succeeded", s)
		}
		if after := auditIDs(t, tr.db); len(after) != len(before) {
			t.Errorf("a failed export deleted %d rows", len(before)-len(after))
		}
	}

	s := &sink{onFirst: func() {
		if err := late.Commit(); err != nil {
			t.Error(err)
		}
	}}
	p, err := tr.db.PruneAudit(ctx, cutoff, s)
	if err != nil {
		t.Fatalf("PruneAudit: %v", err)
	}
	if p.Rows != 2 || len(s.rows) != 2 || s.rows[0].ID != first || s.rows[1].ID != last ||
		*p.FirstID != first || *p.LastID != last || s.rows[0].Action != "test.first" {
		t.Fatalf("PruneAudit = %+v, exported %+v; want rows %d and %d", p, s.rows, first, last)
	}
	ids := auditIDs(t, tr.db)
	if ids[first] || ids[last] || !ids[lateID] {
		t.Errorf("after the prune: first %v, last %v, late %v present; want only the late row", ids[first], ids[last], ids[lateID])
	}
	var raw []byte
	if err := tr.db.SQL().QueryRowContext(ctx, `SELECT details FROM audit_events
		WHERE action = 'audit.prune' AND actor = 'admin'`).Scan(&raw); err != nil {
		t.Fatalf("the audit.prune row: %v", err)
	}
	var details map[string]any
	if err := json.Unmarshal(raw, &details); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"before": "2021-01-01T00:00:00Z", "rows": 2.0, "first_id": float64(first), "last_id": float64(last)}
	if diff := cmp.Diff(want, details); diff != "" {
		t.Errorf("audit.prune details (-want +got):\n%s", diff)
	}
	stats, err := tr.db.AuditStats(ctx)
	if err != nil || stats.Rows != int64(len(ids)) || stats.LastPrune == nil || stats.LastPrune.Action != "audit.prune" ||
		stats.Bytes <= 0 || !stats.OldestAt.Equal(oldTime) {
		t.Errorf("AuditStats = %+v, %v", stats, err)
	}

	// A prune in progress (its lock held) refuses a second one.
	hold, err := tr.db.SQL().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer hold.Rollback()
	if _, err := hold.ExecContext(ctx, `SELECT pg_advisory_xact_lock(7241690014)`); err != nil {
		t.Fatal(err)
	}
	_, err = tr.db.PruneAudit(ctx, cutoff, &sink{})
	wantRefused(t, err, store.ErrConflict, "another prune-audit is running")
}
