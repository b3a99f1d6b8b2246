package authserver_test

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"testing"

	"heyaira/server"
	"heyaira/server/authserver"
	"heyaira/server/internal/servertest"
)

// BenchmarkCIMDAuthorizeUnderJunk measures an honest /oauth/authorize of a
// claude.ai client while 32 senders flood made-up client-ID URLs on
// claude.ai from one IPv6 /64, rotating its addresses (docs/limits.md):
//
// The client's document is stored and fresh, as for every user after the
// first; the flood's URLs are not listed, so each is refused unfetched.
func BenchmarkCIMDAuthorizeUnderJunk(b *testing.B) {
	for _, tc := range []struct {
		name    string
		senders int
	}{{"known/quiet", 0}, {"known/flood", 32}} {
		b.Run(tc.name, func(b *testing.B) {
			s := servertest.NewCIMDStandIn(b)
			const known = "https://claude.ai/oauth/claude-code-client-metadata"
			e := servertest.New(b, servertest.TrustLoopback, func(c *server.Config) { c.CIMD = s.Resolver(b, authserver.CIMDFetchTimeout, known) })
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
						st := authorizeStatus(ctx, e, u, redirect, servertest.V6("2001:db8:66:1::", w<<8|i&0xff))
						mu.Lock()
						junk[st]++
						mu.Unlock()
					}
				})
			}
			b.ResetTimer()
			for i := range b.N {
				if st := authorizeStatus(context.Background(), e, known, redirect, "198.51.100.61"); st != http.StatusSeeOther {
					b.Fatalf("the honest authorization %d: %d", i, st)
				}
			}
			b.StopTimer()
			stop()
			wg.Wait()
			b.Logf("junk answers: %v", junk)
		})
	}
}

// noRedirects is a client that returns a redirect instead of following it.
var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// authorizeStatus GETs /oauth/authorize for the document URL u as the
// client at xff, with a context and no t, and returns the status.
func authorizeStatus(ctx context.Context, e *servertest.Env, u, redirect, xff string) int {
	q := servertest.CIMDClient(u, redirect).AuthorizeQuery("memory:read").Encode()
	req, _ := http.NewRequestWithContext(ctx, "GET", e.Srv.URL+"/oauth/authorize?"+q, nil)
	req.Header.Set("X-Forwarded-For", xff)
	resp, err := noRedirects.Do(req)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}
