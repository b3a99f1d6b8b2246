package server

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// BenchmarkValidTokenUnderJunk measures what an honest client gets while
// others flood its network with made-up bearer tokens (docs/limits.md): one
// valid tools/list call per iteration, from the network the junk comes
// from, with 0 or 32 junk senders running beside it. Compare the two in one
// run; the junk's own answers are counted and reported (junk/op), which
// shows how much of the flood the lane let through to the database.
func BenchmarkValidTokenUnderJunk(b *testing.B) {
	for _, senders := range []int{0, 32} {
		b.Run("senders="+strconv.Itoa(senders), func(b *testing.B) {
			e := newTestEnv(b, trustLoopback, func(c *Config) { c.ToolRate, c.ToolBurst = 1e9, 1<<30 })
			tn := e.newTenant("o", "r")
			good := e.token(tn, "memory:read")
			const network = "198.51.100.7"
			ctx, stop := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			var mu sync.Mutex
			junk := map[int]int{}
			for range senders {
				wg.Go(func() {
					for ctx.Err() == nil {
						s := bearerStatus(ctx, e, junkBearer(), network)
						mu.Lock()
						junk[s]++
						mu.Unlock()
					}
				})
			}
			b.ResetTimer()
			for range b.N {
				if s := bearerStatus(context.Background(), e, good, network); s != http.StatusOK {
					b.Fatalf("the valid token: %d", s)
				}
			}
			b.StopTimer()
			stop()
			wg.Wait()
			b.ReportMetric(float64(junk[http.StatusTooManyRequests]+junk[http.StatusUnauthorized])/float64(b.N), "junk/op")
			b.Logf("junk answers: %v", junk)
		})
	}
}

// bearerStatus is bearerFrom's status, with a context and no t.
func bearerStatus(ctx context.Context, e *testEnv, token, xff string) int {
	req, _ := http.NewRequestWithContext(ctx, "POST", e.srv.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("X-Forwarded-For", xff)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}
