package server

// Rows VC-01 to VC-08 (docs/security-tests.md §2.17, docs/limits.md): no
// limit can be spent by one caller for another. A request that presents a
// valid credential is never refused because of failures made by others,
// whatever address it shares with them. Every test runs on the test
// environment's clock, which stands still, so each bucket holds exactly
// its burst however slow the machine is.

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"heyaira/oauth"
)

// trustLoopback makes the test client's own address (127.0.0.1) a trusted
// proxy, so that X-Forwarded-For names the client.
func trustLoopback(c *Config) {
	c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
}

// bearerFrom sends tools/list with token, as the client at xff.
func bearerFrom(e *testEnv, token, xff string) reply {
	e.t.Helper()
	return e.post(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "Authorization", "Bearer "+token, "X-Forwarded-For", xff)
}

// junkBearer is a well-formed access token the server never issued.
func junkBearer() string { return oauth.NewSecret(oauth.PrefixAccess) }

// statuses counts the HTTP statuses of n calls of f.
func statuses(n int, f func(i int) int) map[int]int {
	got := map[int]int{}
	for i := range n {
		got[f(i)]++
	}
	return got
}

// Row VC-01 (review N2): junk bearer tokens from a network are throttled
// after the burst (429 instead of 401), but a valid OAuth or legacy token
// from that same network is served, directly or behind the trusted proxy,
// and another network's junk is not throttled. Before the fix the valid
// tokens got 429: the spent bucket refused before the lookup.
func TestVC01JunkBearersNeverLockOutAValidToken(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, trustLoopback)
	tn := e.newTenant("o", "r")
	good, legacy := e.token(tn, "memory:read"), e.legacyToken(tn)
	const victim = "198.51.100.7"
	got := statuses(2*refusalBurst, func(int) int { return bearerFrom(e, junkBearer(), victim).status })
	if got[http.StatusUnauthorized] != refusalBurst || got[http.StatusTooManyRequests] != refusalBurst {
		t.Fatalf("junk from one network: %v, want %d × 401 then %d × 429", got, refusalBurst, refusalBurst)
	}
	for name, tok := range map[string]string{"OAuth": good, "legacy": legacy} {
		if r := bearerFrom(e, tok, victim); r.status != http.StatusOK {
			t.Errorf("a valid %s token from the junk's network: %d %s", name, r.status, r.raw)
		}
	}
	if r := bearerFrom(e, junkBearer(), victim); r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") == "" {
		t.Errorf("junk after the valid calls: %d %q, want 429 with Retry-After", r.status, r.header.Get("Retry-After"))
	}
	if r := bearerFrom(e, junkBearer(), "198.51.100.8"); r.status != http.StatusUnauthorized {
		t.Errorf("junk from another network: %d, want 401", r.status)
	}
}

// Row VC-02: a token the server issued that no longer works (expired,
// revoked, or for another resource) charges only its own bucket. It does
// not spend its network's budget, and on a network whose budget junk has
// spent it still gets 401 with the challenge, not 429, so that its client
// refreshes instead of backing off.
func TestVC02IssuedTokensChargeOnlyThemselves(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, trustLoopback)
	tn := e.newTenant("o", "r")
	expired, revoked, other := e.token(tn, "memory:read"), e.token(tn, "memory:read"), e.token(tn, "memory:read")
	e.exec(`UPDATE oauth_tokens SET expires_at = $2 WHERE token_hash = $1`, oauth.Hash(expired), e.clock.now().Add(-time.Minute))
	e.exec(`UPDATE oauth_tokens SET revoked_at = now() WHERE token_hash = $1`, oauth.Hash(revoked))
	e.exec(`UPDATE oauth_tokens SET resource = 'https://elsewhere.example/mcp' WHERE token_hash = $1`, oauth.Hash(other))

	// The expired token, presented again and again, is throttled alone.
	got := statuses(refusalBurst+5, func(int) int { return bearerFrom(e, expired, "203.0.113.1").status })
	if got[http.StatusUnauthorized] != refusalBurst || got[http.StatusTooManyRequests] != 5 {
		t.Errorf("an expired token presented %d times: %v, want %d × 401 then 429", refusalBurst+5, got, refusalBurst)
	}
	if r := bearerFrom(e, junkBearer(), "203.0.113.1"); r.status != http.StatusUnauthorized {
		t.Errorf("junk from the expired token's network: %d, want 401 (its budget untouched)", r.status)
	}

	// Junk spends another network's budget; the issued tokens there still
	// get their 401 with the challenge.
	statuses(refusalBurst, func(int) int { return bearerFrom(e, junkBearer(), "203.0.113.2").status })
	if r := bearerFrom(e, junkBearer(), "203.0.113.2"); r.status != http.StatusTooManyRequests {
		t.Fatalf("junk after the burst: %d, want 429", r.status)
	}
	for name, tok := range map[string]string{"revoked": revoked, "other resource": other} {
		r := bearerFrom(e, tok, "203.0.113.2")
		if r.status != http.StatusUnauthorized || !strings.Contains(r.header.Get("WWW-Authenticate"), "invalid_token") {
			t.Errorf("a %s token on the spent network: %d %q, want 401 invalid_token", name, r.status, r.header.Get("WWW-Authenticate"))
		}
	}
}

// Row VC-03 (review F1 residue): bad refresh tokens and codes that name a
// real client_id, from the client's own network, are throttled (429
// temporarily_unavailable), and still that client's valid refresh and its
// valid code are served from that network. Its rotated refresh token, which
// the server issued, gets invalid_grant, not 429, so that the client signs
// in again. Before the fix the valid grants got 429.
func TestVC03BadGrantsNeverLockOutAClientsValidGrants(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, trustLoopback)
	tn := e.newTenant("o", "r")
	c := e.register("http://127.0.0.1/cb")
	first := str(e.tokens(t, tn, c, "memory:read").body, "refresh_token")
	live := str(e.refresh(c, first).body, "refresh_token") // first is now rotated
	code := e.flow(t, tn, c, "memory:read", "memory:read")
	const network = "203.0.113.40"
	refresh := func(rt string) url.Values {
		return url.Values{"grant_type": {"refresh_token"}, "client_id": {c.id}, "refresh_token": {rt}}
	}
	codes := map[string]int{}
	for range 2 * refusalBurst {
		_, code := postTokenForm(t, e, refresh(oauth.NewSecret(oauth.PrefixRefresh)), network)
		codes[code]++
	}
	if codes[oauth.ErrCodeInvalidGrant] != refusalBurst || codes[oauth.ErrCodeTemporarilyUnavailable] != refusalBurst {
		t.Fatalf("bad refresh tokens naming the client: %v, want %d × invalid_grant then temporarily_unavailable", codes, refusalBurst)
	}
	if status, code := postTokenForm(t, e, refresh(live), network); status != http.StatusOK {
		t.Errorf("the client's valid refresh from the same network: %d %s", status, code)
	}
	redeem := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "code_verifier": {c.verifier},
		"redirect_uri": {c.redirect}, "client_id": {c.id}, "resource": {e.cfg.PublicURL + "/mcp"}}
	if status, code := postTokenForm(t, e, redeem, network); status != http.StatusOK {
		t.Errorf("the client's valid code from the same network: %d %s", status, code)
	}
	if status, code := postTokenForm(t, e, refresh(first), network); status != http.StatusBadRequest || code != oauth.ErrCodeInvalidGrant {
		t.Errorf("the client's rotated refresh token on the spent network: %d %s, want 400 invalid_grant", status, code)
	}
	if status, code := postTokenForm(t, e, refresh(oauth.NewSecret(oauth.PrefixRefresh)), network); status != http.StatusTooManyRequests {
		t.Errorf("junk after the valid grants: %d %s, want 429", status, code)
	}
}

// Row VC-04 (review N1): made-up client-ID URLs on a listed host spend the
// host's fetch budget for never-seen URLs only. A client whose document is
// stored refetches from a budget of its own, and while its refetch fails
// for a reason that may pass (here the host's 503) its stored document is
// served for up to cimdStaleFor past its freshness; after that, and for a
// document its host no longer serves (404), the user gets the error page.
// Before the fix the real client's users got 429 while one anonymous
// request every six seconds kept the host's budget spent.
func TestVC04CIMDClientsOutliveJunkAndOutages(t *testing.T) {
	t.Parallel()
	s := newCIMDStandIn(t)
	// The junk comes from many networks, so that it spends the host's budget
	// and not only one network's share of it (VC-07).
	e := newTestEnv(t, trustLoopback, func(c *Config) { c.CIMD = s.resolver(t, cimdFetchTimeout, "docs.example") })
	legit := "https://docs.example/client.json"
	doc := []byte(`{"client_id":"` + legit + `","client_name":"Legit","redirect_uris":["http://127.0.0.1/cb"]}`)
	s.serveJSON(legit, doc, "Cache-Control", "max-age=60")
	sent := 0
	get := func(u string) page {
		sent++
		return cimdAuthorizeFrom(t, e, cimdClient(u, "http://127.0.0.1/cb"), "memory:read", distinctNetwork(sent))
	}
	if p := get(legit); p.status != http.StatusSeeOther {
		t.Fatalf("first authorization: %d %s", p.status, p.body)
	}
	e.clock.advance(2 * time.Minute) // the stored document is stale
	junk := statuses(cimdHostBurst+5, func(i int) int { return get("https://docs.example/x/" + strconv.Itoa(i)).status })
	if junk[http.StatusTooManyRequests] != 5 {
		t.Errorf("made-up URLs on the host: %v, want the last 5 throttled", junk)
	}
	if p := get(legit); p.status != http.StatusSeeOther || s.fetches(legit) != 2 {
		t.Errorf("the real client after the junk: %d, %d fetches; want 303 and a refetch", p.status, s.fetches(legit))
	}
	// Sustained junk, one every six seconds, changes nothing for it.
	for i := range 5 {
		e.clock.advance(6 * time.Second)
		get("https://docs.example/y/" + strconv.Itoa(i))
		if p := get(legit); p.status != http.StatusSeeOther {
			t.Fatalf("round %d of sustained junk: the real client got %d", i, p.status)
		}
	}

	// The host fails: the stored document is served stale, and refetches
	// are bounded by the URL's own budget.
	s.handle(legit, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) })
	e.clock.advance(2 * time.Minute)
	before := s.fetches(legit)
	for i := range 10 {
		if p := get(legit); p.status != http.StatusSeeOther {
			t.Fatalf("authorization %d during the host's outage: %d %s", i, p.status, p.body)
		}
	}
	if n := s.fetches(legit) - before; n < 1 || n > cimdURLBurst {
		t.Errorf("%d refetches during the outage, want 1 to %d", n, cimdURLBurst)
	}
	if !strings.Contains(e.logs.String(), `"cimd":"stale"`) {
		t.Error("the access log does not say the document was served stale")
	}
	e.clock.advance(cimdStaleFor + time.Hour)
	if p := get(legit); p.status != http.StatusBadGateway {
		t.Errorf("a day past its freshness, with the host still failing: %d, want 502", p.status)
	}

	// A document its host no longer serves is not used stale.
	s.serveJSON(legit, doc, "Cache-Control", "max-age=60")
	if p := get(legit); p.status != http.StatusSeeOther {
		t.Fatalf("the host is back: %d", p.status)
	}
	s.handle(legit, func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) })
	e.clock.advance(2 * time.Minute)
	if p := get(legit); p.status != http.StatusBadGateway {
		t.Errorf("the document was removed: %d, want 502", p.status)
	}
}

// Row VC-07 (issue 27 item 4): each client network has a share of a
// listed host's budget for never-seen client-ID URLs (cimdNetworkBurst,
// then one a minute), and each wide network (/48, /24) a share of
// cimdWideBurst. One /64 rotating its addresses through made-up URLs on
// claude.ai spends only its share, and a second /64 of the same /48 only
// what is left of the /48's; a new honest client of claude.ai from another
// network is still fetched and goes on to sign-in. Before the fix the junk
// spent the whole host budget and the honest client got 429.
func TestVC07NetworksShareAHostsBudgetForNewURLs(t *testing.T) {
	t.Parallel()
	s := newCIMDStandIn(t)
	e := newTestEnv(t, trustLoopback, func(c *Config) { c.CIMD = s.resolver(t, cimdFetchTimeout, "claude.ai") })
	get := func(u, xff string) page {
		return cimdAuthorizeFrom(t, e, cimdClient(u, "http://127.0.0.1:53682/callback"), "memory:read", xff)
	}
	round := 0
	junk := func(n int, prefix string) map[int]int {
		round++
		return statuses(n, func(i int) int {
			return get("https://claude.ai/junk/"+strconv.Itoa(round)+"/"+strconv.Itoa(i), v6(prefix, i)).status
		})
	}
	// One /64, many addresses: its share is fetched (404 from the host, so
	// 502), the rest is refused before any connection.
	before := s.totalFetches()
	if got := junk(cimdHostBurst+5, "2001:db8:7:1::"); got[http.StatusBadGateway] != cimdNetworkBurst ||
		got[http.StatusTooManyRequests] != cimdHostBurst+5-cimdNetworkBurst {
		t.Errorf("made-up URLs from one /64: %v, want %d fetched (502), the rest 429", got, cimdNetworkBurst)
	}
	if n := s.totalFetches() - before; n != cimdNetworkBurst {
		t.Errorf("%d fetches for one /64's junk, want %d", n, cimdNetworkBurst)
	}
	// A second /64 of the same /48 gets what is left of the /48's share.
	if got := junk(cimdHostBurst, "2001:db8:7:2::"); got[http.StatusBadGateway] != cimdWideBurst-cimdNetworkBurst {
		t.Errorf("made-up URLs from a second /64 of the /48: %v, want %d fetched", got, cimdWideBurst-cimdNetworkBurst)
	}
	p := get("https://claude.ai/junk/again", "2001:db8:7:1::99")
	if wait, _ := strconv.Atoi(p.header.Get("Retry-After")); p.status != http.StatusTooManyRequests || wait < 1 || wait > 61 {
		t.Errorf("the spent /64 again: %d Retry-After %q, want 429 within a minute", p.status, p.header.Get("Retry-After"))
	}
	// A new honest client of the same host, from another network.
	const honest = "https://claude.ai/oauth/claude-code-client-metadata"
	if p := get(honest, "198.51.100.20"); p.status != http.StatusSeeOther || p.header.Get("Location") != "/signin" {
		t.Fatalf("a new client of claude.ai from another network: %d %s", p.status, p.body)
	}
	if n := s.fetches(honest); n != 1 {
		t.Errorf("the honest client's document fetched %d times, want 1", n)
	}
	// A minute later the /64's share has one fetch more, not its burst.
	e.clock.advance(time.Minute)
	if got := junk(cimdNetworkBurst, "2001:db8:7:1::"); got[http.StatusBadGateway] != 1 {
		t.Errorf("the /64 a minute later: %v, want 1 fetched", got)
	}
}

// Row VC-10 (review of 2026-12-04): a never-seen URL refused because all
// cimdMaxInFlight fetch slots are busy charges none of its caller's shares.
// Before the fix the network's share was charged first, so a network that
// met busy slots had one fetch fewer left.
func TestVC10BusyFetchSlotsChargeNothing(t *testing.T) {
	t.Parallel()
	s := newCIMDStandIn(t)
	e := newTestEnv(t, trustLoopback, func(c *Config) { c.CIMD = s.resolver(t, cimdFetchTimeout, "claude.ai") })
	get := func(u string) int {
		return cimdAuthorizeFrom(t, e, cimdClient(u, "http://127.0.0.1:53682/callback"), "memory:read", "198.51.100.70").status
	}
	slots := e.cfg.CIMD.slots
	for range cap(slots) {
		slots <- struct{}{}
	}
	if status := get("https://claude.ai/busy/0"); status != http.StatusTooManyRequests {
		t.Errorf("a new URL while every fetch slot is busy: %d, want 429", status)
	}
	for range cap(slots) {
		<-slots
	}
	got := statuses(cimdNetworkBurst, func(i int) int { return get("https://claude.ai/busy/" + strconv.Itoa(i+1)) })
	if got[http.StatusBadGateway] != cimdNetworkBurst {
		t.Errorf("the network's share after a refusal for busy slots: %v, want %d fetched (502)", got, cimdNetworkBurst)
	}
}

// Row VC-08 (issue 27 item 4): a network holds at most one of the refusal
// lane's refusalLane slots, and its other requests wait in a queue of its
// own. So a flood from one spent network leaves refusalLane-1 slots to every
// other spent network, however many requests it sends, and the lane's
// server-wide bound is unchanged. Counted, not timed: a request whose
// context is already done takes a free slot or fails at once. Before the fix
// the flood's first refusalLane requests took every slot, and a valid token
// from another spent network waited behind all of the flood.
func TestVC08OneNetworkHoldsOneLaneSlot(t *testing.T) {
	t.Parallel()
	t0 := time.Now()
	g := newRefusalGate(nothingIssued, func() time.Time { return t0 })
	junk := oauth.Hash(oauth.NewSecret(oauth.PrefixAccess))
	const flood = "2001:db8:8:1::" // one /64, many addresses
	others := []string{"198.51.100.31", "198.51.100.32", "198.51.100.33", "2001:db8:8:2::1"}
	for _, n := range append([]string{networkOf(flood, 32, 64)}, others...) {
		spend(t, g, n)
	}
	done, cancel := context.WithCancel(t.Context())
	cancel()
	var held []*passage
	for i := range refusalLane {
		if p, err := g.enter(done, networkOf(v6(flood, i), 32, 64), junk); err == nil {
			held = append(held, p)
		}
	}
	if len(held) != 1 {
		t.Fatalf("the flooding /64 holds %d lane slots, want 1", len(held))
	}
	// The rest of its flood waits in its own queue, not in the lane.
	waiting, in := 10, make(chan *passage)
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	for i := range waiting {
		go func() {
			if p, err := g.enter(ctx, networkOf(v6(flood, 100+i), 32, 64), junk); err == nil {
				in <- p
			}
		}()
	}
	// Every other spent network still gets a slot at once, up to the lane.
	for _, n := range others[:refusalLane-1] {
		p, err := g.enter(done, n, junk)
		if err != nil || !p.inLane {
			t.Fatalf("a request of spent network %s while the /64 floods: %v", n, err)
		}
		held = append(held, p)
	}
	if _, err := g.enter(done, others[refusalLane-1], junk); err == nil {
		t.Errorf("a %dth request got a slot of the full lane", refusalLane+1)
	}
	// The flood's waiting requests pass one at a time as slots come back.
	held[0].leave()
	for range waiting {
		(<-in).leave()
	}
	for _, p := range held[1:] {
		p.leave()
	}
	if queues := g.queues.len(); queues != 0 {
		t.Errorf("%d network queues left once every request left, want 0", queues)
	}
}

// v6 is the address of one /64 whose last 16 bits are i.
func v6(prefix string, i int) string {
	a := netip.MustParseAddr(prefix).As16()
	a[14], a[15] = byte(i>>8), byte(i)
	return netip.AddrFrom16(a).String()
}

// registerFrom posts one dynamic registration as the client at xff.
func registerFrom(e *testEnv, xff string) int {
	e.t.Helper()
	return e.postBody("/oauth/register", "application/json",
		`{"redirect_uris":["http://127.0.0.1/cb"],"client_name":"x","token_endpoint_auth_method":"none"}`, "X-Forwarded-For", xff).status
}

// Row VC-05 (review N3): an IPv6 client is keyed by its /64, so rotating
// addresses within it meets the limits of one address; and registration's
// server-wide budget is shared out, so that neither a /64 nor a /48 of them
// can spend it for everyone. Before the fix 200 rotated junk bearers were
// never throttled, and 100 registrations from one /64 left an honest client
// with 429.
func TestVC05IPv6IsKeyedByItsPrefix(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, trustLoopback)
	got := statuses(2*refusalBurst, func(i int) int { return bearerFrom(e, junkBearer(), v6("2001:db8:2:2::", i)).status })
	if got[http.StatusUnauthorized] != refusalBurst || got[http.StatusTooManyRequests] != refusalBurst {
		t.Errorf("junk bearers from %d addresses of one /64: %v, want %d × 401 then 429", 2*refusalBurst, got, refusalBurst)
	}
	created := statuses(110, func(i int) int { return registerFrom(e, v6("2001:db8:1:1::", i)) })
	if created[http.StatusCreated] != registerPerIPBurst {
		t.Errorf("registrations from one /64: %v, want %d created", created, registerPerIPBurst)
	}
	// One /48, many /64s: its share of the server-wide budget.
	wide := statuses(registerWideBurst+10, func(i int) int {
		return registerFrom(e, v6("2001:db8:3:"+strconv.FormatInt(int64(i), 16)+"::", 1))
	})
	if wide[http.StatusCreated] != registerWideBurst {
		t.Errorf("registrations from %d /64s of one /48: %v, want %d created", registerWideBurst+10, wide, registerWideBurst)
	}
	for _, honest := range []string{"198.51.100.99", "2001:db8:9::1"} {
		if s := registerFrom(e, honest); s != http.StatusCreated {
			t.Errorf("an honest client at %s after both: %d", honest, s)
		}
	}
}

// Row VC-06 (review N5): HEYAIRA_TRUSTED_PROXIES refuses a /0, which would
// let every client name its own address, and reports every range that is
// wider than one address, for the start-up warning (internal/app/serve.go).
func TestVC06TrustedProxiesAreAddresses(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"0.0.0.0/0", "10.0.0.1, ::/0"} {
		if _, err := ParseTrustedProxies(s); err == nil || !strings.Contains(err.Error(), "every address") {
			t.Errorf("%q: %v, want a refusal", s, err)
		}
	}
	trusted, err := ParseTrustedProxies("10.0.0.0/24, 10.0.1.5, fd00::/8, 2001:db8::7")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(TrustedRanges(trusted), ","); got != "10.0.0.0/24,fd00::/8" {
		t.Errorf("ranges %q, want the two ranges only", got)
	}
}

// firstRead reports on started when its handler first reads the body.
type firstRead struct {
	io.ReadCloser
	once    sync.Once
	started chan struct{}
}

func (b *firstRead) Read(p []byte) (int, error) {
	b.once.Do(func() { close(b.started) })
	return b.ReadCloser.Read(p)
}

// Row VC-09 (review of 2026-12-04): a token request whose body has not
// arrived holds no slot of the refusal gate. A network's bucket is spent;
// one of its clients sends the headers of a refresh and stalls in the body;
// the network's valid refresh is answered meanwhile. Before the fix the
// handler entered the gate before it read the body, so the stalled request
// held the network's one slot (and one of refusalLane) until ReadTimeout,
// and the valid refresh waited behind it.
func TestVC09AStalledTokenBodyHoldsNoLaneSlot(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	tn := e.newTenant("o", "r")
	c := e.register("http://127.0.0.1/cb")
	rt := str(e.tokens(t, tn, c, "memory:read").body, "refresh_token")
	g := newRefusalGate(nothingIssued, e.cfg.Now)
	spend(t, g, "127.0.0.1")
	started := make(chan struct{})
	h := handleToken(slog.New(slog.NewJSONHandler(e.logs, nil)), &e.cfg, e.db, g)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Stall") != "" {
			r.Body = &firstRead{ReadCloser: r.Body, started: started}
		}
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()

	stall, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer stall.Close()
	fmt.Fprintf(stall, "POST / HTTP/1.1\r\nHost: %s\r\nX-Stall: 1\r\nContent-Type: application/x-www-form-urlencoded\r\n"+
		"Content-Length: 1000\r\n\r\ngrant_type=refresh_token&", srv.Listener.Addr())
	<-started // the handler is reading the stalled body: with the old order, inside the gate

	done := make(chan int, 1)
	go func() {
		resp, err := http.PostForm(srv.URL, url.Values{"grant_type": {"refresh_token"}, "client_id": {c.id}, "refresh_token": {rt}})
		if err != nil {
			done <- 0
			return
		}
		resp.Body.Close()
		done <- resp.StatusCode
	}()
	select {
	case status := <-done:
		if status != http.StatusOK {
			t.Errorf("the network's valid refresh beside a stalled body: %d, want 200", status)
		}
	case <-time.After(30 * time.Second):
		t.Error("the network's valid refresh waited behind a request whose body never came")
	}
}
