package server

import (
	"context"
	"strings"
	"testing"
	"time"

	"heyaira/github/githubtest"
	"heyaira/internal/soak"
	"heyaira/store"
)

// TestRateLimitPerPrincipal pins the per-principal tool-call limit: a
// principal over its burst gets the tool error rate_limited with
// retry_after_seconds; another principal is not affected.
// Row LD-04 (docs/security-tests.md).
func TestRateLimitPerPrincipal(t *testing.T) {
	t.Parallel()
	clk := &clock{t: time.Now()}
	e := newTestEnv(t, func(c *Config) { c.ToolRate = 1; c.ToolBurst = 2; c.Now = clk.now })
	tn := e.newTenant("o", "r")
	busy := e.token(tn, "memory:read")
	calm := e.token(e.newTenant("o", "r"), "memory:read")
	args := map[string]any{"key": "k"}
	e.wantCode(busy, "memory_get", args, "not_found")
	e.wantCode(busy, "memory_get", args, "not_found")
	sc := e.wantCode(busy, "memory_get", args, "rate_limited")
	if sc["error"].(map[string]any)["retry_after_seconds"] != 1.0 {
		t.Errorf("rate_limited without retry_after_seconds: %v", sc)
	}
	e.wantCode(calm, "memory_get", args, "not_found")
	clk.add(time.Second)
	e.wantCode(busy, "memory_get", args, "not_found")
}

// TestGitHubInFlightCap pins the server-wide cap on concurrent GitHub
// requests: with the cap full, a read waits GitHubWait and then gets
// rate_limited, without reaching GitHub.
func TestGitHubInFlightCap(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, func(c *Config) { c.GitHubInFlight = 1; c.GitHubWait = 50 * time.Millisecond })
	tn := e.newTenant("o", "r")
	e.gh.AddFile("o", "r", commitA, "x.md", []byte("hello"))
	src := e.addSource(tn, "runtime", "x.md", commitA, "", 65536)
	tok := e.token(tn, "documents:read")
	e.gh.Inject(githubtest.RouteContents, githubtest.Stall())
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.call(tok, "git_document_get", map[string]any{"source_id": src}) // holds the only slot until the deadline
	}()
	for e.gh.Count(githubtest.RouteContents) == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	e.wantCode(tok, "git_document_get", map[string]any{"source_id": src}, "rate_limited")
	if n := e.gh.Count(githubtest.RouteContents); n != 1 {
		t.Errorf("%d contents requests, want 1 (the capped read must not reach GitHub)", n)
	}
	e.gh.ClearFaults()
	<-done
}

// TestStoreDeadline pins the database deadline: a lock held on
// document_sources makes a read fail with store_unavailable after
// store.QueryTimeout, not hang.
// Row DB-06 (docs/security-tests.md).
func TestStoreDeadline(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	tn := e.newTenant("o", "r")
	src := e.addSource(tn, "runtime", "x.md", commitA, "", 65536)
	tok := e.token(tn, "documents:read")
	tx, err := e.db.SQL().BeginTx(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.Exec(`LOCK TABLE document_sources IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	e.wantCode(tok, "git_document_get", map[string]any{"source_id": src}, "store_unavailable")
	d := time.Since(start)
	if d < store.QueryTimeout {
		t.Errorf("failed after %v, before the %v deadline", d, store.QueryTimeout)
	}
	soak.Gate(t, d <= store.QueryTimeout+2*time.Second, "failed after %v, want about %v", d, store.QueryTimeout)
	if strings.Contains(e.logs.String(), "LOCK") {
		t.Error("SQL text reached the logs")
	}
}

// TestDocumentBOMIsContent pins the UTF-8 byte order mark: it is part of the
// file, returned and hashed like any other bytes, never stripped.
// Row IN-05 (docs/security-tests.md).
func TestDocumentBOMIsContent(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	tn := e.newTenant("o", "r")
	doc := []byte("\xef\xbb\xbfhello")
	e.gh.AddFile("o", "r", commitA, "bom.md", doc)
	src := e.addSource(tn, "runtime", "bom.md", commitA, "", 65536)
	tok := e.token(tn, "documents:read")
	sc, isErr, raw := e.call(tok, "git_document_get", map[string]any{"source_id": src})
	if isErr || sc["content"] != string(doc) || sc["range"].(map[string]any)["total_bytes"] != 8.0 || sc["sha256"] != hexSHA(doc) {
		t.Fatalf("BOM document = %s", raw)
	}
	// The BOM is one 3-byte character: start_byte 1 is inside it.
	e.wantCode(tok, "git_document_get", map[string]any{"source_id": src, "start_byte": 1}, "byte_range_invalid")
}
