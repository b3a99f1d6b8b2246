package server

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"
)

// BenchmarkCIMDAuthorizeUnderJunk measures an honest /oauth/authorize of a
// claude.ai client while 32 senders flood made-up client-ID URLs on
// claude.ai from one IPv6 /64, rotating its addresses (docs/limits.md):
//
//   - known: the client's document is stored and fresh, as for every user
//     after the first;
//   - new: each iteration is a client URL never seen before, from a /48 of
//     its own, and the standing clock moves 12 s per iteration, so the
//     host's budget refills by two fetches each time; the flood's shares
//     refill by far less. ok/op is the fraction of honest authorizations
//     that went on to sign-in (303); the rest got 429 cimd_rate_limited.
func BenchmarkCIMDAuthorizeUnderJunk(b *testing.B) {
	for _, tc := range []struct {
		name    string
		senders int
		fresh   bool
	}{{"known/quiet", 0, false}, {"known/flood", 32, false}, {"new/quiet", 0, true}, {"new/flood", 32, true}} {
		b.Run(tc.name, func(b *testing.B) {
			s := newCIMDStandIn(b)
			e := newTestEnv(b, trustLoopback, func(c *Config) { c.CIMD = s.resolver(b, cimdFetchTimeout, "claude.ai") })
			const known = "https://claude.ai/oauth/claude-code-client-metadata"
			const redirect = "http://127.0.0.1:53682/callback"
			if st := authorizeStatus(context.Background(), e, known, redirect, "198.51.100.60"); st != http.StatusSeeOther {
				b.Fatalf("the first authorization of the known client: %d", st)
			}
			ctx, stop := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			var mu sync.Mutex
			junk := map[int]int{}
			for w := range tc.senders {
				wg.Go(func() {
					for i := 0; ctx.Err() == nil; i++ {
						u := "https://claude.ai/junk/" + strconv.Itoa(w) + "/" + strconv.Itoa(i)
						st := authorizeStatus(ctx, e, u, redirect, v6("2001:db8:66:1::", w<<8|i&0xff))
						mu.Lock()
						junk[st]++
						mu.Unlock()
					}
				})
			}
			ok := 0
			b.ResetTimer()
			for i := range b.N {
				u, from := known, "198.51.100.61"
				if tc.fresh {
					e.clock.advance(12 * time.Second)
					u, from = "https://claude.ai/bench/"+strconv.Itoa(i), "2001:db8:"+strconv.FormatInt(int64(0x1000+i%0xe000), 16)+"::1"
					s.serveJSON(u, []byte(`{"client_id":"`+u+`","client_name":"Bench","redirect_uris":["`+redirect+`"]}`))
				}
				st := authorizeStatus(context.Background(), e, u, redirect, from)
				switch {
				case st == http.StatusSeeOther:
					ok++
				case !tc.fresh || st != http.StatusTooManyRequests:
					b.Fatalf("the honest authorization %d: %d", i, st)
				}
			}
			b.StopTimer()
			stop()
			wg.Wait()
			b.ReportMetric(float64(ok)/float64(b.N), "ok/op")
			b.Logf("honest: %d of %d went on to sign-in; junk answers: %v", ok, b.N, junk)
		})
	}
}

// noRedirects is a client that returns a redirect instead of following it.
var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// authorizeStatus GETs /oauth/authorize for the document URL u as the
// client at xff, with a context and no t, and returns the status.
func authorizeStatus(ctx context.Context, e *testEnv, u, redirect, xff string) int {
	q := cimdClient(u, redirect).authorizeQuery("memory:read").Encode()
	req, _ := http.NewRequestWithContext(ctx, "GET", e.srv.URL+"/oauth/authorize?"+q, nil)
	req.Header.Set("X-Forwarded-For", xff)
	resp, err := noRedirects.Do(req)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}
