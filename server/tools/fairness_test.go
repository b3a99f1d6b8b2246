package tools_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"heyaira/github/githubtest"
	"heyaira/server"
	"heyaira/server/internal/servertest"
	"heyaira/store"
)

// Row BT-20: one project flooding GitHub reads at its in-flight share
// leaves another project's reads succeeding. The server has 16 slots here
// (a quarter of the default, to spare the machine; the shares scale with
// it). Project A's repository is held at the fake GitHub, so each of A's
// reads that gets a slot keeps it; four principals of A run 24 reads in a
// loop. Before the shares, A held all 16 slots and B's reads waited
// GitHubWait and got rate_limited. Now A holds at most its share (4) and
// B's reads all succeed; the test logs B's success rate and latency.
func TestBT20ProjectFloodLeavesOthersGitHub(t *testing.T) {
	t.Parallel()
	e := servertest.New(t, func(c *server.Config) {
		c.ToolRate, c.ToolBurst, c.GitHubInFlight, c.GitHubWait, c.GitHubHourlyBudget = 1e6, 1e6, 16, 100*time.Millisecond, 1e6
	})
	a, b := e.NewTenant("o", "flood"), e.NewTenant("o", "calm")
	e.GH.AddFile("o", "flood", servertest.CommitA, "a.md", []byte("flood"))
	e.GH.AddFile("o", "calm", servertest.CommitA, "b.md", []byte("calm"))
	srcA := e.AddSource(a, "runtime", "a.md", servertest.CommitA, "", 65536)
	srcB := e.AddSource(b, "runtime", "b.md", servertest.CommitA, "", 65536)
	tokB := e.Token(b, "documents:read")
	release := e.GH.Hold("o", "flood")

	stop := make(chan struct{})
	var refusedA atomic.Int64
	var wg sync.WaitGroup
	for i := range 4 {
		tok := e.Token(member(e, a, fmt.Sprintf("flooder %d", i)), "documents:read")
		for range 6 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					r := e.RPC(tok, "tools/call", map[string]any{"name": "git_document_get", "arguments": map[string]any{"source_id": srcA}})
					// A held read ends at the GitHub client's deadline.
					if c := servertest.RPCOutcome(r); c == "rate_limited" {
						refusedA.Add(1)
					} else if c != "ok" && c != "provider_unavailable" {
						t.Errorf("A's read: %s", c)
						return
					}
				}
			}()
		}
	}
	// 24 reads against 16 server slots: once 8 were refused, A holds every
	// slot it can get.
	for refusedA.Load() < 8 {
		time.Sleep(5 * time.Millisecond)
	}

	const reads = 100
	var lat []time.Duration
	ok := 0
	for range reads {
		start := time.Now()
		r := e.RPC(tokB, "tools/call", map[string]any{"name": "git_document_get", "arguments": map[string]any{"source_id": srcB}})
		lat = append(lat, time.Since(start))
		if c := servertest.RPCOutcome(r); c == "ok" {
			ok++
		} else if ok == 0 && len(lat) == 1 {
			t.Errorf("B's first read while A floods: %s", c)
		}
	}
	held := e.GH.Held("o", "flood")
	close(stop)
	release()
	wg.Wait()
	slices.Sort(lat)
	t.Logf("while A floods (%d refusals, %d reads held at GitHub): B %d/%d reads ok (%.1f%%), p50 %v, p99 %v",
		refusedA.Load(), held, ok, reads, 100*float64(ok)/reads, lat[reads/2], lat[reads*99/100])
	if ok != reads {
		t.Errorf("B: %d of %d reads succeeded while A flooded, want all", ok, reads)
	}
	if held > 4 {
		t.Errorf("A holds %d GitHub requests in flight, over its share of 4", held)
	}
}

// member adds a new principal to the tenant's project and returns the
// tenant as that principal.
func member(e *servertest.Env, tn servertest.Tenant, name string) servertest.Tenant {
	e.T.Helper()
	tn.Principal = e.QueryString(`INSERT INTO principals (account_id, name) VALUES ($1, $2) RETURNING id`, tn.Account, name)
	e.Exec(`INSERT INTO project_members (project_id, principal_id) VALUES ($1, $2)`, tn.Project, tn.Principal)
	return tn
}

// Row BT-22: a project's hourly GitHub budget. With an administrator's
// budget of 2, the burst is 2 and a token comes back every half hour: the
// third read is rate_limited with retry_after_seconds 1800 and never
// reaches GitHub; another project (default budget) is not affected; half
// an hour later the project reads again.
func TestBT22HourlyGitHubBudget(t *testing.T) {
	t.Parallel()
	clk := servertest.NewManualClock(time.Date(2026, 1, 1, 10, 59, 30, 0, time.UTC))
	e := servertest.New(t, func(c *server.Config) { c.Now = clk.Now })
	a, b := e.NewTenant("o", "r"), e.NewTenant("o", "r")
	e.GH.AddFile("o", "r", servertest.CommitA, "x.md", []byte("hello"))
	srcA := e.AddSource(a, "runtime", "x.md", servertest.CommitA, "", 65536)
	srcB := e.AddSource(b, "runtime", "x.md", servertest.CommitA, "", 65536)
	tokA, tokB := e.Token(a, "documents:read"), e.Token(b, "documents:read")
	if _, err := e.DB.SetProjectLimits(context.Background(), a.Project, store.LimitsUpdate{GitHubRequestsHourly: ptr(2)}); err != nil {
		t.Fatal(err)
	}
	argsA := map[string]any{"source_id": srcA}
	for range 2 {
		if _, isErr, raw := e.Call(tokA, "git_document_get", argsA); isErr {
			t.Fatalf("read within the budget: %s", raw)
		}
	}
	before := e.GH.Count(githubtest.RouteContents)
	sc := e.WantCode(tokA, "git_document_get", argsA, "rate_limited")
	if got := sc["error"].(map[string]any)["retry_after_seconds"]; got != 1800.0 {
		t.Errorf("retry_after_seconds = %v, want 1800 (an hour's budget of 2)", got)
	}
	if n := e.GH.Count(githubtest.RouteContents) - before; n != 0 {
		t.Errorf("the read over budget made %d GitHub requests", n)
	}
	if _, isErr, raw := e.Call(tokB, "git_document_get", map[string]any{"source_id": srcB}); isErr {
		t.Errorf("another project's read: %s", raw)
	}
	clk.Add(30 * time.Minute)
	if _, isErr, raw := e.Call(tokA, "git_document_get", argsA); isErr {
		t.Errorf("read half an hour later: %s", raw)
	}
}

func ptr[T any](v T) *T { return &v }
