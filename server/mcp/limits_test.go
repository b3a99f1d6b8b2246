package mcp_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"heyaira/github/githubtest"
	"heyaira/internal/soak"
	"heyaira/server"
	"heyaira/server/internal/servertest"
	"heyaira/store"
)

// TestRateLimitPerPrincipal pins the per-principal tool-call limit: a
// principal over its burst gets the tool error rate_limited with
// retry_after_seconds; another principal is not affected.
// Row LD-04 (docs/security-tests.md).
func TestRateLimitPerPrincipal(t *testing.T) {
	t.Parallel()
	clk := servertest.NewManualClock(time.Now())
	e := servertest.New(t, func(c *server.Config) { c.ToolRate = 1; c.ToolBurst = 2; c.Now = clk.Now })
	tn := e.NewTenant("o", "r")
	busy := e.Token(tn, "memory:read")
	calm := e.Token(e.NewTenant("o", "r"), "memory:read")
	args := map[string]any{"key": "k"}
	e.WantCode(busy, "memory_get", args, "not_found")
	e.WantCode(busy, "memory_get", args, "not_found")
	sc := e.WantCode(busy, "memory_get", args, "rate_limited")
	if sc["error"].(map[string]any)["retry_after_seconds"] != 1.0 {
		t.Errorf("rate_limited without retry_after_seconds: %v", sc)
	}
	e.WantCode(calm, "memory_get", args, "not_found")
	clk.Add(time.Second)
	e.WantCode(busy, "memory_get", args, "not_found")
}

// TestGitHubInFlightCap pins the server-wide cap on concurrent GitHub
// requests: with the cap full, a read waits GitHubWait and then gets
// rate_limited, without reaching GitHub.
func TestGitHubInFlightCap(t *testing.T) {
	t.Parallel()
	e := servertest.New(t, func(c *server.Config) { c.GitHubInFlight = 1; c.GitHubWait = 50 * time.Millisecond })
	tn := e.NewTenant("o", "r")
	e.GH.AddFile("o", "r", servertest.CommitA, "x.md", []byte("hello"))
	src := e.AddSource(tn, "runtime", "x.md", servertest.CommitA, "", 65536)
	tok := e.Token(tn, "documents:read")
	e.GH.Inject(githubtest.RouteContents, githubtest.Stall())
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.Call(tok, "git_document_get", map[string]any{"source_id": src}) // holds the only slot until the deadline
	}()
	for e.GH.Count(githubtest.RouteContents) == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	e.WantCode(tok, "git_document_get", map[string]any{"source_id": src}, "rate_limited")
	if n := e.GH.Count(githubtest.RouteContents); n != 1 {
		t.Errorf("%d contents requests, want 1 (the capped read must not reach GitHub)", n)
	}
	e.GH.ClearFaults()
	<-done
}

// TestStoreDeadline pins the database deadline: a lock held on
// document_sources makes a read fail with store_unavailable after
// store.QueryTimeout, not hang.
// Row DB-06 (docs/security-tests.md).
func TestStoreDeadline(t *testing.T) {
	t.Parallel()
	e := servertest.New(t)
	tn := e.NewTenant("o", "r")
	src := e.AddSource(tn, "runtime", "x.md", servertest.CommitA, "", 65536)
	tok := e.Token(tn, "documents:read")
	tx, err := e.DB.SQL().BeginTx(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.Exec(`LOCK TABLE document_sources IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	e.WantCode(tok, "git_document_get", map[string]any{"source_id": src}, "store_unavailable")
	d := time.Since(start)
	if d < store.QueryTimeout {
		t.Errorf("failed after %v, before the %v deadline", d, store.QueryTimeout)
	}
	soak.Gate(t, d <= store.QueryTimeout+2*time.Second, "failed after %v, want about %v", d, store.QueryTimeout)
	if strings.Contains(e.Logs.String(), "LOCK") {
		t.Error("SQL text reached the logs")
	}
}

// TestDocumentBOMIsContent pins the UTF-8 byte order mark: it is part of the
// file, returned and hashed like any other bytes, never stripped.
// Row IN-05 (docs/security-tests.md).
func TestDocumentBOMIsContent(t *testing.T) {
	t.Parallel()
	e := servertest.New(t)
	tn := e.NewTenant("o", "r")
	doc := []byte("\xef\xbb\xbfhello")
	e.GH.AddFile("o", "r", servertest.CommitA, "bom.md", doc)
	src := e.AddSource(tn, "runtime", "bom.md", servertest.CommitA, "", 65536)
	tok := e.Token(tn, "documents:read")
	sc, isErr, raw := e.Call(tok, "git_document_get", map[string]any{"source_id": src})
	if isErr || sc["content"] != string(doc) || sc["range"].(map[string]any)["total_bytes"] != 8.0 || sc["sha256"] != servertest.HexSHA(doc) {
		t.Fatalf("BOM document = %s", raw)
	}
	// The BOM is one 3-byte character: start_byte 1 is inside it.
	e.WantCode(tok, "git_document_get", map[string]any{"source_id": src, "start_byte": 1}, "byte_range_invalid")
}
