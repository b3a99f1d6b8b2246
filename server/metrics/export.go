package metrics

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"maps"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"time"
)

// addGauge registers a gauge read at scrape time.
func (m *Metrics) addGauge(name, help string, read func() float64) {
	m.addSampled(name, help, "gauge", read)
}

// addSampled registers a value read at scrape time, of type gauge or counter
// (a total kept elsewhere, such as database/sql's wait statistics).
func (m *Metrics) addSampled(name, help, typ string, read func() float64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.gauges = append(m.gauges, func(w io.Writer) {
		fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s %s\n%s %g\n", name, help, name, typ, name, read())
	})
}

// WatchRuntime registers gauges for the database pool, GitHub requests in
// flight (inFlight) and the Go runtime.
func (m *Metrics) WatchRuntime(db *sql.DB, inFlight func() int) {
	if db != nil {
		m.addGauge("heyaira_db_connections_in_use", "Database connections in use.", func() float64 { return float64(db.Stats().InUse) })
		m.addGauge("heyaira_db_connections_idle", "Idle database connections.", func() float64 { return float64(db.Stats().Idle) })
		m.addGauge("heyaira_db_connections_max", "Most database connections the pool may open.",
			func() float64 { return float64(db.Stats().MaxOpenConnections) })
		m.addSampled("heyaira_db_wait_count", "Waits for a database connection, total.", "counter",
			func() float64 { return float64(db.Stats().WaitCount) })
		m.addSampled("heyaira_db_wait_seconds_total", "Time spent waiting for a database connection.", "counter",
			func() float64 { return db.Stats().WaitDuration.Seconds() })
	}
	m.addGauge("heyaira_github_in_flight", "GitHub requests in flight.", func() float64 { return float64(inFlight()) })
	m.addGauge("go_goroutines", "Goroutines.", func() float64 { return float64(runtime.NumGoroutine()) })
	m.addGauge("go_memstats_heap_alloc_bytes", "Live heap bytes.", func() float64 {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return float64(ms.HeapAlloc)
	})
}

// WatchAudit registers the audit table's growth (heyaira-admin prune-audit
// is its retention): PostgreSQL's row estimate and the bytes on disk, read
// at each scrape with one catalog lookup. -1 when the database cannot say.
func (m *Metrics) WatchAudit(size func(context.Context) (rows, bytes int64, err error)) {
	read := func(bytes bool) func() float64 {
		return func() float64 {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			r, b, err := size(ctx)
			switch {
			case err != nil:
				return -1
			case bytes:
				return float64(b)
			}
			return float64(r)
		}
	}
	m.addGauge("heyaira_audit_rows_estimate", "Audit rows, as PostgreSQL estimates them (pg_class.reltuples; -1 before the first ANALYZE).", read(false))
	m.addGauge("heyaira_audit_bytes", "Bytes on disk of the audit table and its indexes.", read(true))
}

// WriteText writes every metric in the Prometheus text format, sorted by name.
// The lock that every request's counters take is held only to copy them:
// the sampled values (a database query among them) are read, and w is
// written, after it is released, so a slow database or a slow scraper
// delays no request.
func (m *Metrics) WriteText(w io.Writer) {
	var b bytes.Buffer
	m.mu.Lock()
	m.writeCounted(&b)
	gauges := slices.Clone(m.gauges)
	m.mu.Unlock()
	w.Write(b.Bytes())
	for _, g := range gauges {
		g(w)
	}
}

// writeCounted writes the counters and histograms; m.mu is held.
func (m *Metrics) writeCounted(w io.Writer) {
	for _, name := range slices.Sorted(maps.Keys(m.counters)) {
		fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s counter\n", name, m.help[name], name)
		for _, l := range slices.Sorted(maps.Keys(m.counters[name])) {
			fmt.Fprintf(w, "%s%s %g\n", name, braces(l), m.counters[name][l])
		}
	}
	for _, name := range slices.Sorted(maps.Keys(m.histograms)) {
		fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s histogram\n", name, m.help[name], name)
		for _, l := range slices.Sorted(maps.Keys(m.histograms[name])) {
			h := m.histograms[name][l]
			var cum uint64
			for i, ub := range latencyBuckets {
				cum += h.counts[i]
				fmt.Fprintf(w, "%s_bucket{%s} %d\n", name, joinLabels(l, labels("le", strconv.FormatFloat(ub, 'g', -1, 64))), cum)
			}
			fmt.Fprintf(w, "%s_bucket{%s} %d\n", name, joinLabels(l, `le="+Inf"`), h.count)
			fmt.Fprintf(w, "%s_sum%s %g\n%s_count%s %d\n", name, braces(l), h.sum, name, braces(l), h.count)
		}
	}
}

func braces(l string) string {
	if l == "" {
		return ""
	}
	return "{" + l + "}"
}

func joinLabels(a, b string) string {
	if a == "" {
		return b
	}
	return a + "," + b
}

// Handler serves m in the Prometheus text format, on the main
// listener (Config.MetricsOnMain) or a separate one.
func Handler(m *Metrics) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		m.WriteText(w)
	})
}
