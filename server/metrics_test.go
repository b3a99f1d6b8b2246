package server_test

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"heyaira/server"
	"heyaira/server/internal/servertest"
)

func TestMetricsEndpoint(t *testing.T) {
	t.Parallel()
	e := servertest.New(t, func(c *server.Config) { c.MetricsOnMain = true })
	tn := e.NewTenant("o", "r")
	e.GH.AddFile("o", "r", servertest.CommitA, "x.md", []byte("hello"))
	src := e.AddSource(tn, "runtime", "x.md", servertest.CommitA, "", 65536)
	tok := e.Token(tn, "documents:read")
	e.Call(tok, "git_document_get", map[string]any{"source_id": src})
	e.Call(tok, "git_document_get", map[string]any{"source_id": "nope"})
	resp, err := http.Get(e.Srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	text := string(b)
	for _, want := range []string{
		`heyaira_tool_calls_total{tool="git_document_get",code="ok"} 1`,
		`heyaira_tool_calls_total{tool="git_document_get",code="source_not_found"} 1`,
		`heyaira_http_requests_total{route="POST /mcp",status="200"} 2`,
		`heyaira_tool_call_duration_seconds_count{tool="git_document_get"} 2`,
		`# TYPE heyaira_http_request_duration_seconds histogram`,
		`heyaira_db_connections_in_use `,
		`heyaira_github_in_flight 0`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if strings.Contains(text, tok) || strings.Contains(text, src) {
		t.Error("/metrics exposes a token or an identifier")
	}
}

// Row AR-04: audit growth is visible on /metrics without a count of the
// table: PostgreSQL's row estimate, once ANALYZE has run, and the table's
// bytes on disk, which grow with its rows.
func TestAR04AuditGrowthMetrics(t *testing.T) {
	t.Parallel()
	e := servertest.New(t, func(c *server.Config) { c.MetricsOnMain = true })
	tn := e.NewTenant("o", "r")
	tok := e.Token(tn, "documents:read")
	scrape := func() (rows, bytes float64) {
		t.Helper()
		resp, err := http.Get(e.Srv.URL + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		for _, line := range strings.Split(string(b), "\n") {
			name, v, _ := strings.Cut(line, " ")
			n, _ := strconv.ParseFloat(v, 64)
			switch name {
			case "heyaira_audit_rows_estimate":
				rows = n
			case "heyaira_audit_bytes":
				bytes = n
			}
		}
		return rows, bytes
	}
	_, before := scrape()
	for range 300 { // refused reads are audited (AZ-03)
		e.Call(tok, "git_document_get", map[string]any{"source_id": "00000000-0000-0000-0000-000000000000"})
	}
	e.Exec(`ANALYZE audit_events`)
	rows, after := scrape()
	if want := float64(e.CountRows("audit_events")); rows != want || before <= 0 || after <= before {
		t.Errorf("audit metrics: %v rows estimated (counted %v), %v bytes before and %v after", rows, want, before, after)
	}
}
