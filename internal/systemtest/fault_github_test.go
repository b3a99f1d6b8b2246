package systemtest

// GitHub faults at the process level (docs/security-tests.md PF-04, and
// T7 in its fault-injection table): the real
// program while the fake GitHub hangs, or while a TCP proxy in front of it
// accepts connections and never completes a TLS handshake.

import (
	"context"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"heyaira/github/githubtest"
	"heyaira/internal/app"
	"heyaira/internal/loadgen"
	"heyaira/internal/soak"
	"heyaira/oauth"
	"heyaira/store/storetest"
)

// addPrincipal adds a member principal to the live server's project and
// returns an access token for it (each principal has its own rate bucket).
func (s *liveServer) addPrincipal(t *testing.T, scopes ...string) string {
	t.Helper()
	db := sqlDB(t, s.dbURL)
	var id string
	if err := db.QueryRow(`INSERT INTO principals (account_id, name)
		SELECT account_id, 'extra' FROM projects WHERE id = $1 RETURNING id`, s.project).Scan(&id); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO project_members (project_id, principal_id) VALUES ($1, $2)`, s.project, id); err != nil {
		t.Fatal(err)
	}
	tok := newToken(t, oauth.PrefixAccess, time.Hour)
	storetest.InsertAccessToken(t, s.dbURL, id, s.project, s.base+"/mcp", tok, scopes)
	return tok
}

// principals returns n access tokens of n different principals of the
// project (the first is s.access), each with every memory, task and
// document scope.
func (s *liveServer) principals(t *testing.T, n int) []string {
	t.Helper()
	toks := []string{s.access}
	for len(toks) < n {
		toks = append(toks, s.addPrincipal(t, "memory:read", "memory:write", "tasks:read", "tasks:write", "documents:read"))
	}
	return toks
}

// TestT7GitHubHang is PF-04's GitHub hang (T7 in docs/security-tests.md,
// Fault injection): the fake GitHub stops answering
// contents requests. Document reads end at the provider deadline (±10%)
// with provider_unavailable, or, beyond the in-flight cap of 64, get
// rate_limited after the 2 s wait without reaching GitHub; the fake never
// sees more than 64 at once; /oauth/token, metadata, /readyz and the memory
// and task tools keep p99 ≤ 50 ms meanwhile; goroutines stay bounded; the
// next read after recovery succeeds. The default run uses a 3 s provider
// deadline (a test hook) and 100 readers; scripts/soak uses the production
// 15 s deadline and 200 readers.
// Row PF-04 (docs/security-tests.md).
func TestT7GitHubHang(t *testing.T) {
	// Not parallel: latency and goroutine figures are process-wide.
	deadline := soak.Scaled(3*time.Second, 15*time.Second)
	readers := soak.Scaled(100, 200)
	gh := githubtest.New(t)
	dbURL := storetest.NewURL(t)
	s := newLiveServer(t, dbURL+"&application_name=heyaira", gh, app.Hooks{GitHubTimeout: deadline}, 8192)
	admin := sqlDB(t, dbURL)
	c := newLoadClient(s.base)
	defer c.close()
	if o := c.toolCall(s.access, "git_document_get", map[string]any{"source_id": s.source}); !o.ok() {
		t.Fatalf("warm-up read: %+v", o)
	}
	c.toolCall(s.access, "memory_put", map[string]any{"key": "probe", "content": "x"})
	var readerTokens []string
	for range (readers + 99) / 100 { // 100 calls per principal fit the burst
		readerTokens = append(readerTokens, s.addPrincipal(t, "documents:read"))
	}
	c.close()
	gh.HTTPClient().CloseIdleConnections()
	base := snapshot(admin, "heyaira")
	probeBase := runProbes(t, s, c, 2*time.Second)

	gh.Inject(githubtest.RouteContents, githubtest.Stall())
	var wg sync.WaitGroup
	results := make([]outcome, readers)
	var maxG atomic.Int64
	stopSampling := make(chan struct{})
	go func() {
		for {
			select {
			case <-stopSampling:
				return
			case <-time.After(20 * time.Millisecond):
				if g := int64(runtime.NumGoroutine()); g > maxG.Load() {
					maxG.Store(g)
				}
			}
		}
	}()
	rc := newLoadClient(s.base)
	defer rc.close()
	for i := range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = rc.toolCall(readerTokens[i/100], "git_document_get", map[string]any{"source_id": s.source})
		}()
	}
	// Probe once every reader is in place — 64 hanging at GitHub, the rest
	// waiting for a slot — until shortly before the deadline frees them.
	hangStart := time.Now()
	for gh.Count(githubtest.RouteContents) < 65 && time.Since(hangStart) < deadline/2 {
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
	probeHang := runProbes(t, s, c, deadline-time.Since(hangStart)-200*time.Millisecond)
	wg.Wait()
	close(stopSampling)

	var unavailable, limited int
	var minD, maxD time.Duration
	for _, o := range results {
		d := o.end.Sub(o.start)
		switch o.code {
		case "provider_unavailable":
			unavailable++
			if minD == 0 || d < minD {
				minD = d
			}
			maxD = max(maxD, d)
			if d < deadline*9/10 {
				t.Errorf("read ended after %v, before the %v deadline", d, deadline)
			}
			soak.Gate(t, d <= deadline*11/10+500*time.Millisecond, "read ended after %v, want the %v deadline +10%%", d, deadline)
		case "rate_limited":
			limited++
		default:
			t.Errorf("read during the hang: %s HTTP %d %.200s", o.code, o.status, o.body)
		}
	}
	t.Logf("T7: %d reads during the hang: %d provider_unavailable after %v…%v (deadline %v), %d rate_limited by the in-flight cap; "+
		"the fake saw at most %d requests at once; goroutines peaked at %d (baseline %d)",
		readers, unavailable, minD.Round(time.Millisecond), maxD.Round(time.Millisecond), deadline, limited,
		gh.MaxInFlight(), maxG.Load(), base.goroutines)
	if n := gh.MaxInFlight(); n > 64 {
		t.Errorf("the fake saw %d concurrent requests, over the cap of 64", n)
	}
	if unavailable > 64 {
		t.Errorf("%d reads reached the hanging GitHub, over the cap of 64", unavailable)
	}
	// Goroutines: each in-flight request costs a handful (client, server,
	// transport, fake); bounded by the requests, not growing with time.
	if g := maxG.Load(); g > int64(base.goroutines+20*readers) {
		t.Errorf("goroutines peaked at %d for %d readers", g, readers)
	}
	// The gate is on all probes together (a per-kind p99 of ~20 samples is
	// the maximum); under -race the gate doubles (raceOn).
	gate := 50 * time.Millisecond
	if raceOn {
		gate *= 2
	}
	var all, allBase []time.Duration
	for kind, ds := range probeHang {
		all, allBase = append(all, ds...), append(allBase, probeBase[kind]...)
		t.Logf("T7 bulkhead: %s p99 %v during the hang (before: %v; %d samples)", kind, loadgen.Pct(ds, 0.99).Round(100*time.Microsecond),
			loadgen.Pct(probeBase[kind], 0.99).Round(100*time.Microsecond), len(ds))
	}
	t.Logf("T7 bulkhead: all probes p50 %v p99 %v during the hang (before: p50 %v p99 %v; %d samples; gate %v)",
		loadgen.Pct(all, 0.5).Round(100*time.Microsecond), loadgen.Pct(all, 0.99).Round(100*time.Microsecond),
		loadgen.Pct(allBase, 0.5).Round(100*time.Microsecond), loadgen.Pct(allBase, 0.99).Round(100*time.Microsecond), len(all), gate)
	soak.Gate(t, loadgen.Pct(all, 0.99) <= gate, "probe p99 %v during the GitHub hang, want ≤ %v", loadgen.Pct(all, 0.99), gate)
	gh.ClearFaults()
	if o := c.toolCall(s.access, "git_document_get", map[string]any{"source_id": s.source}); !o.ok() {
		t.Errorf("first read after recovery: %+v", o)
	}
	c.close()
	rc.close()
	gh.HTTPClient().CloseIdleConnections()
	h, took := waitHygiene(t, admin, "heyaira", base, 5*time.Second, 5)
	t.Logf("T11 after T7: baseline %v; after %v (%v to settle)", base, h, took.Round(10*time.Millisecond))
}

// runProbes sends the bulkhead probes of T7 for d at about 40 per second,
// sequentially per kind, and returns the latencies of successful ones by
// kind. Any failure is a test error.
func runProbes(t *testing.T, s *liveServer, c *loadClient, d time.Duration) map[string][]time.Duration {
	t.Helper()
	var mu sync.Mutex
	out := map[string][]time.Duration{}
	ctx, cancel := context.WithTimeout(t.Context(), d)
	defer cancel()
	refresh := s.refresh
	probes := map[string]func() outcome{
		"/oauth/token": func() outcome {
			o := c.do("token", "POST", "/oauth/token", "application/x-www-form-urlencoded", refreshForm(s.clientID, refresh))
			if next := jsonField(o.body, "refresh_token"); next != "" {
				refresh = next
			}
			return o
		},
		"metadata": func() outcome {
			return c.do("metadata", "GET", "/.well-known/oauth-authorization-server", "", "")
		},
		"/readyz":    func() outcome { return c.do("readyz", "GET", "/readyz", "", "") },
		"memory_get": func() outcome { return c.toolCall(s.access, "memory_get", map[string]any{"key": "probe"}) },
		"memory_put": func() outcome {
			return c.toolCall(s.access, "memory_put", map[string]any{"key": "probe", "content": "y"})
		},
		"task_list":   func() outcome { return c.toolCall(s.access, "task_list", map[string]any{}) },
		"task_create": func() outcome { return c.toolCall(s.access, "task_create", map[string]any{"title": "probe"}) },
	}
	var wg sync.WaitGroup
	for kind, probe := range probes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tick := time.NewTicker(150 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
				}
				o := probe()
				if !o.ok() {
					t.Errorf("probe %s: %s HTTP %d %.200s", kind, o.code, o.status, o.body)
					continue
				}
				mu.Lock()
				out[kind] = append(out[kind], o.end.Sub(o.start))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	s.refresh = refresh
	return out
}

// TestPF04NoTLSHandshake is PF-04's second case: GitHub's address accepts
// the TCP connection and never speaks TLS (a proxy in blackhole mode in
// front of the fake). The read ends at the provider deadline with
// provider_unavailable; other tools are unaffected.
func TestPF04NoTLSHandshake(t *testing.T) {
	t.Parallel()
	gh := githubtest.New(t)
	fakeAddr := strings.TrimPrefix(strings.TrimSuffix(gh.URL(), githubtest.BasePath), "https://")
	proxy := storetest.ProxyTo(t, "tcp", fakeAddr)
	proxy.Blackhole()
	// The fake's HTTPClient trusts its certificate (valid for 127.0.0.1).
	hooks := app.Hooks{GitHubBaseURL: "https://" + proxy.Addr() + githubtest.BasePath,
		GitHubHTTP: gh.HTTPClient(), GitHubNow: gh.Clock().Now, GitHubTimeout: time.Second}
	s := newLiveServer(t, storetest.NewURL(t), gh, hooks, 100)
	c := newLoadClient(s.base)
	defer c.close()
	o := c.toolCall(s.access, "git_document_get", map[string]any{"source_id": s.source})
	d := o.end.Sub(o.start)
	t.Logf("PF-04: read behind a silent TLS peer: %s after %v (deadline 1s)", o.code, d.Round(time.Millisecond))
	if o.code != "provider_unavailable" || d < 900*time.Millisecond {
		t.Errorf("read: %s after %v, want provider_unavailable at the 1s deadline", o.code, d)
	}
	soak.Gate(t, d <= 2*time.Second, "read: provider_unavailable after %v, want about the 1s deadline", d)
	if m := c.toolCall(s.access, "memory_get", map[string]any{"key": "nothing"}); m.code != "not_found" {
		t.Errorf("memory tool meanwhile: %+v", m)
	}
	if proxy.Accepted() == 0 {
		t.Error("the read never dialed the silent peer")
	}
}
