package metrics

import (
	"context"
	"io"
	"sync"
	"testing"
	"time"
)

// TestMetricsLabelEscaping pins the text format's escaping of label values
// (backslash, double quote, newline), done by one shared Replacer.
func TestMetricsLabelEscaping(t *testing.T) {
	got := labels("route", "a\\b\"c\nd", "status", "200")
	want := `route="a\\b\"c\nd",status="200"`
	if got != want {
		t.Errorf("labels = %s, want %s", got, want)
	}
	if got := labels(); got != "" {
		t.Errorf("labels() = %q, want empty", got)
	}
}

func BenchmarkMetricsLabels(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		labels("route", "/mcp", "status", "200")
	}
}

// A scrape reads its sampled values, the audit table's size among them,
// outside the lock every request's counters take: while that read waits
// on the database, requests are counted and answered. Before, WriteText
// held the lock through it, and every tool response of the replica waited
// for a slow or partitioned database (up to the read's 1 s, twice a scrape).
func TestMetricsScrapeDoesNotBlockRequests(t *testing.T) {
	t.Parallel()
	m := New()
	reading, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	m.WatchAudit(func(context.Context) (int64, int64, error) {
		once.Do(func() { close(reading) })
		<-release
		return 0, 0, nil
	})
	scraped := make(chan struct{})
	go func() {
		m.WriteText(io.Discard)
		close(scraped)
	}()
	<-reading
	counted := make(chan struct{})
	go func() {
		m.ToolCall("memory_get", "ok", time.Millisecond)
		close(counted)
	}()
	select {
	case <-counted:
	case <-time.After(30 * time.Second):
		t.Error("a request's counter waited for a scrape's database read")
	}
	close(release)
	<-scraped
	<-counted
}
