package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"heyaira/oauth"
	"heyaira/server"
	"heyaira/server/internal/servertest"
)

// BenchmarkValidTokenUnderJunk measures what an honest client gets while
// others flood its network with made-up bearer tokens (docs/limits.md): one
// valid tools/list call per iteration, from the network the junk comes
// from, with 0 or 32 junk senders running beside it. Compare the two in one
// run; the junk's own answers are counted and reported (junk/op): each is
// a 401 that never reached the database.
func BenchmarkValidTokenUnderJunk(b *testing.B) {
	for _, senders := range []int{0, 32} {
		b.Run("senders="+strconv.Itoa(senders), func(b *testing.B) {
			e := servertest.New(b, servertest.TrustLoopback, func(c *server.Config) { c.ToolRate, c.ToolBurst = 1e9, 1<<30 })
			tn := e.NewTenant("o", "r")
			good := e.Token(tn, "memory:read")
			const network = "198.51.100.7"
			ctx, stop := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			var mu sync.Mutex
			junk := map[int]int{}
			for range senders {
				wg.Go(func() {
					for ctx.Err() == nil {
						s := bearerStatus(ctx, e, junkBearer(e), network)
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
func bearerStatus(ctx context.Context, e *servertest.Env, token, xff string) int {
	req, _ := http.NewRequestWithContext(ctx, "POST", e.Srv.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
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

// BenchmarkRefreshUnderJunk measures an honest refresh at the token
// endpoint (one rotation per iteration), quiet and while 32 senders on its
// own network flood made-up refresh tokens naming the same client
// (docs/limits.md). The junk costs the client's lookup and no more.
func BenchmarkRefreshUnderJunk(b *testing.B) {
	for _, tc := range []struct {
		name    string
		senders int
		honest  string
	}{{"quiet", 0, "198.51.100.50"}, {"same", 32, "198.51.100.7"}} {
		b.Run(tc.name, func(b *testing.B) {
			e := servertest.New(b, servertest.TrustLoopback)
			tn := e.NewTenant("o", "r")
			clientID, rt := insertRefreshToken(e, tn)
			const flood = "198.51.100.7"
			form := func(rt string) url.Values {
				return url.Values{"grant_type": {"refresh_token"}, "client_id": {clientID}, "refresh_token": {rt}}
			}
			ctx, stop := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			var mu sync.Mutex
			junk := map[int]int{}
			for range tc.senders {
				wg.Go(func() {
					for ctx.Err() == nil {
						s, _ := tokenPost(ctx, e, form(madeUp(rt, oauth.PrefixRefresh)), flood)
						mu.Lock()
						junk[s]++
						mu.Unlock()
					}
				})
			}
			b.ResetTimer()
			for range b.N {
				s, body := tokenPost(context.Background(), e, form(rt), tc.honest)
				if s != http.StatusOK {
					b.Fatalf("the honest refresh: %d %v", s, body)
				}
				rt = servertest.Str(body, "refresh_token")
			}
			b.StopTimer()
			stop()
			wg.Wait()
			b.ReportMetric(float64(junk[http.StatusTooManyRequests]+junk[http.StatusBadRequest])/float64(b.N), "junk/op")
			b.Logf("junk answers: %v", junk)
		})
	}
}

// insertRefreshToken stores a client, a grant for the tenant and a live
// refresh token of it, and returns the client's public id and the token.
func insertRefreshToken(e *servertest.Env, tn servertest.Tenant) (clientID, token string) {
	e.T.Helper()
	clientID = e.QueryString(`INSERT INTO oauth_clients (client_name, redirect_uris, metadata)
		VALUES ('bench', ARRAY['http://127.0.0.1/cb'], '{"grant_types":["authorization_code","refresh_token"]}') RETURNING id`)
	grant := e.QueryString(`INSERT INTO oauth_grants (client_id, principal_id, project_id, scopes)
		VALUES ($1, $2, $3, ARRAY['memory:read']) RETURNING id`, clientID, tn.Principal, tn.Project)
	token = e.Secrets.Mint(oauth.PrefixRefresh, time.Now().Add(24*time.Hour))
	e.Exec(`INSERT INTO oauth_tokens (token_hash, kind, grant_id, scopes, resource, family_id, expires_at)
		VALUES ($1, 'refresh', $2, ARRAY['memory:read'], $3, gen_random_uuid(), $4)`,
		oauth.Hash(token), grant, e.Cfg.PublicURL+"/mcp", time.Now().Add(24*time.Hour))
	return e.Secrets.ClientID(clientID), token
}

// tokenPost posts form to /oauth/token as the client at xff, with a
// context and no t, and returns the status and the decoded body.
func tokenPost(ctx context.Context, e *servertest.Env, form url.Values, xff string) (int, map[string]any) {
	req, _ := http.NewRequestWithContext(ctx, "POST", e.Srv.URL+"/oauth/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Forwarded-For", xff)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil
	}
	defer resp.Body.Close()
	var body map[string]any
	json.NewDecoder(resp.Body).Decode(&body)
	return resp.StatusCode, body
}
