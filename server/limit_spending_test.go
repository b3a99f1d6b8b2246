package server_test

// Rows VC-01 to VC-10 (docs/security-tests.md, docs/limits.md): no limit
// can be spent by one caller for another, and a request that presents a
// valid credential is never refused because of failures made by others,
// whatever address it shares with them. Since every secret the server
// issues carries its MAC (oauth/minted.go), junk never reaches the store,
// so the rows are proved by counting statements on the wire, not by
// buckets: made-up secrets cost none, and there is nothing left for junk to
// spend.

import (
	"crypto/rand"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"heyaira/oauth"
	"heyaira/server"
	"heyaira/server/authserver"
	"heyaira/server/internal/servertest"
	"heyaira/server/internal/web"
	"heyaira/store/storetest"
)

// bearerFrom sends tools/list with token, as the client at xff.
func bearerFrom(e *servertest.Env, token, xff string) servertest.Reply {
	e.T.Helper()
	return e.Post(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "Authorization", "Bearer "+token, "X-Forwarded-For", xff)
}

// madeUp is a secret of exactly the shape of like (a real one): the same
// prefix, length and alphabet, with a random body. The server never minted
// it.
func madeUp(like, prefix string) string {
	n := servertest.Base64URL.DecodedLen(len(like) - len(prefix))
	b := make([]byte, n)
	rand.Read(b)
	return prefix + servertest.Base64URL.EncodeToString(b)
}

// junkBearer is an access token of the real shape that the server never
// minted.
func junkBearer(e *servertest.Env) string {
	return madeUp(e.Secrets.Mint(oauth.PrefixAccess, time.Now()), oauth.PrefixAccess)
}

// statuses counts the HTTP statuses of n calls of f.
func statuses(n int, f func(i int) int) map[int]int {
	got := map[int]int{}
	for i := range n {
		got[f(i)]++
	}
	return got
}

// statementsOf is how many statements f sent to PostgreSQL.
func statementsOf(wc *storetest.WireCounter, f func()) int64 {
	before := wc.Counts()
	f()
	return wc.Counts().Sub(before).Statements
}

// Row VC-01: junk bearer tokens from one network, however
// many, are answered 401 with no statement, and a valid OAuth or legacy
// token from that same network is served, each for one lookup. Before the
// redesign junk spent a per-network bucket and then queued in a lane behind
// which a valid token waited; before that, it got 429.
func TestVC01JunkBearersNeverLockOutAValidToken(t *testing.T) {
	t.Parallel()
	e, wc := servertest.NewCounted(t, servertest.TrustLoopback)
	tn := e.NewTenant("o", "r")
	good, legacy := e.Token(tn, "memory:read"), e.LegacyToken(tn)
	const victim = "198.51.100.7"
	var got map[int]int
	if n := statementsOf(wc, func() {
		got = statuses(200, func(int) int { return bearerFrom(e, junkBearer(e), victim).Status })
	}); n != 0 || got[http.StatusUnauthorized] != 200 {
		t.Fatalf("200 junk bearers from one network: %v, %d statements; want 200 × 401 and none", got, n)
	}
	for name, tok := range map[string]string{"OAuth": good, "legacy": legacy} {
		var r servertest.Reply
		if n := statementsOf(wc, func() { r = bearerFrom(e, tok, victim) }); r.Status != http.StatusOK || n != 1 {
			t.Errorf("a valid %s token from the junk's network: %d, %d statements; want 200 and 1", name, r.Status, n)
		}
	}
}

// Row VC-02: a token the server minted that no longer works
// (expired, revoked, or for another resource) gets 401 with the challenge,
// never 429, so that its client refreshes; each costs the one indexed
// lookup a valid token costs. A token whose embedded expiry has passed
// costs none.
func TestVC02IssuedTokensCostOneLookup(t *testing.T) {
	t.Parallel()
	e, wc := servertest.NewCounted(t, servertest.TrustLoopback)
	tn := e.NewTenant("o", "r")
	expired, revoked, other := e.Token(tn, "memory:read"), e.Token(tn, "memory:read"), e.Token(tn, "memory:read")
	e.Exec(`UPDATE oauth_tokens SET expires_at = $2 WHERE token_hash = $1`, oauth.Hash(expired), e.Clock.Now().Add(-time.Minute))
	e.Exec(`UPDATE oauth_tokens SET revoked_at = now() WHERE token_hash = $1`, oauth.Hash(revoked))
	e.Exec(`UPDATE oauth_tokens SET resource = 'https://elsewhere.example/mcp' WHERE token_hash = $1`, oauth.Hash(other))
	for name, tok := range map[string]string{"expired": expired, "revoked": revoked, "other resource": other} {
		for i := range 3 {
			var r servertest.Reply
			n := statementsOf(wc, func() { r = bearerFrom(e, tok, "203.0.113.1") })
			if r.Status != http.StatusUnauthorized || !strings.Contains(r.Header.Get("WWW-Authenticate"), "invalid_token") || n != 1 {
				t.Errorf("the %s token, time %d: %d %q, %d statements; want 401 invalid_token and 1", name, i+1,
					r.Status, r.Header.Get("WWW-Authenticate"), n)
			}
		}
	}
	lapsed := e.Secrets.Mint(oauth.PrefixAccess, e.Clock.Now().Add(-time.Second))
	var r servertest.Reply
	if n := statementsOf(wc, func() { r = bearerFrom(e, lapsed, "203.0.113.1") }); r.Status != http.StatusUnauthorized || n != 0 {
		t.Errorf("a minted token past its embedded expiry: %d, %d statements; want 401 and none", r.Status, n)
	}
}

// Row VC-03 (review F1 residue): made-up refresh tokens and codes that name
// a real client_id, from the client's own network, get invalid_grant with
// no statement, and the client's valid refresh and valid code are served
// from that network; its rotated refresh token, which the server minted,
// gets invalid_grant too, so that the client signs in again.
func TestVC03BadGrantsNeverLockOutAClientsValidGrants(t *testing.T) {
	t.Parallel()
	e, wc := servertest.NewCounted(t, servertest.TrustLoopback)
	tn := e.NewTenant("o", "r")
	c := e.Register("http://127.0.0.1/cb")
	first := servertest.Str(e.Tokens(t, tn, c, "memory:read").Body, "refresh_token")
	live := servertest.Str(e.Refresh(c, first).Body, "refresh_token") // first is now rotated
	code := e.Flow(t, tn, c, "memory:read", "memory:read")
	const network = "203.0.113.40"
	refresh := func(rt string) url.Values {
		return url.Values{"grant_type": {"refresh_token"}, "client_id": {c.ID}, "refresh_token": {rt}}
	}
	redeem := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "code_verifier": {c.Verifier},
		"redirect_uri": {c.Redirect}, "client_id": {c.ID}, "resource": {e.Cfg.PublicURL + "/mcp"}}
	junkCode := url.Values{}
	for k, v := range redeem {
		junkCode[k] = v
	}
	junkCode.Set("code", madeUp(code, oauth.PrefixCode))
	codes := map[string]int{}
	// A made-up grant is refused before the client is looked up.
	n := statementsOf(wc, func() {
		for range 100 {
			_, code := postTokenForm(t, e, refresh(madeUp(live, oauth.PrefixRefresh)), network)
			codes[code]++
			_, code = postTokenForm(t, e, junkCode, network)
			codes[code]++
		}
	})
	if codes[oauth.ErrCodeInvalidGrant] != 200 || n != 0 {
		t.Fatalf("made-up grants naming the client: %v, %d statements; want 200 × invalid_grant and none", codes, n)
	}
	if status, code := postTokenForm(t, e, refresh(live), network); status != http.StatusOK {
		t.Errorf("the client's valid refresh from the same network: %d %s", status, code)
	}
	if status, code := postTokenForm(t, e, redeem, network); status != http.StatusOK {
		t.Errorf("the client's valid code from the same network: %d %s", status, code)
	}
	if status, code := postTokenForm(t, e, refresh(first), network); status != http.StatusBadRequest || code != oauth.ErrCodeInvalidGrant {
		t.Errorf("the client's rotated refresh token: %d %s, want 400 invalid_grant", status, code)
	}
}

// Row VC-04: a listed client whose document is stored
// refetches from a budget of its own, and while its refetch fails for a
// reason that may pass (here the host's 503) its stored document is served
// for up to authserver.CIMDStaleFor past its freshness; after that, and for a document
// its host no longer serves (404), the user gets the error page. Made-up
// URLs on the same host, however many, are refused unfetched (VC-07).
func TestVC04CIMDClientsOutliveJunkAndOutages(t *testing.T) {
	t.Parallel()
	s := servertest.NewCIMDStandIn(t)
	legit := "https://docs.example/client.json"
	e := servertest.New(t, servertest.TrustLoopback, func(c *server.Config) { c.CIMD = s.Resolver(t, authserver.CIMDFetchTimeout, legit) })
	doc := []byte(`{"client_id":"` + legit + `","client_name":"Legit","redirect_uris":["http://127.0.0.1/cb"]}`)
	s.ServeJSON(legit, doc, "Cache-Control", "max-age=60")
	sent := 0
	get := func(u string) servertest.Page {
		sent++
		return servertest.CIMDAuthorizeFrom(t, e, servertest.CIMDClient(u, "http://127.0.0.1/cb"), "memory:read", servertest.DistinctNetwork(sent))
	}
	if p := get(legit); p.Status != http.StatusSeeOther {
		t.Fatalf("first authorization: %d %s", p.Status, p.Body)
	}
	e.Clock.Advance(2 * time.Minute) // the stored document is stale
	junk := statuses(50, func(i int) int { return get("https://docs.example/x/" + strconv.Itoa(i)).Status })
	if junk[http.StatusBadRequest] != 50 {
		t.Errorf("made-up URLs on the host: %v, want 50 × 400", junk)
	}
	if p := get(legit); p.Status != http.StatusSeeOther || s.Fetches(legit) != 2 {
		t.Errorf("the real client after the junk: %d, %d fetches; want 303 and a refetch", p.Status, s.Fetches(legit))
	}

	// The host fails: the stored document is served stale, and refetches
	// are bounded by the URL's own budget.
	s.Handle(legit, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) })
	e.Clock.Advance(2 * time.Minute)
	before := s.Fetches(legit)
	for i := range 10 {
		if p := get(legit); p.Status != http.StatusSeeOther {
			t.Fatalf("authorization %d during the host's outage: %d %s", i, p.Status, p.Body)
		}
	}
	if n := s.Fetches(legit) - before; n < 1 || n > authserver.CIMDURLBurst {
		t.Errorf("%d refetches during the outage, want 1 to %d", n, authserver.CIMDURLBurst)
	}
	if !strings.Contains(e.Logs.String(), `"cimd":"stale"`) {
		t.Error("the access log does not say the document was served stale")
	}
	e.Clock.Advance(authserver.CIMDStaleFor + time.Hour)
	if p := get(legit); p.Status != http.StatusBadGateway {
		t.Errorf("a day past its freshness, with the host still failing: %d, want 502", p.Status)
	}

	// A document its host no longer serves is not used stale.
	s.ServeJSON(legit, doc, "Cache-Control", "max-age=60")
	if p := get(legit); p.Status != http.StatusSeeOther {
		t.Fatalf("the host is back: %d", p.Status)
	}
	s.Handle(legit, func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) })
	e.Clock.Advance(2 * time.Minute)
	if p := get(legit); p.Status != http.StatusBadGateway {
		t.Errorf("the document was removed: %d, want 502", p.Status)
	}
}

// Row VC-07 (CIMD by exact URL): a client-ID URL the operator did not
// list, even on a listed URL's host, is refused with a 400 page that names
// the setting to add, and causes no fetch and no statement; so made-up URLs
// spend nothing a new honest client needs. Before the redesign they spent
// per-host, per-network and per-wide-network budgets, and a flood of them
// answered cimd_rate_limited to everyone's new URLs.
// Row JK-07 (docs/security-tests.md).
func TestVC07UnlistedClientIDURLsCostNothing(t *testing.T) {
	t.Parallel()
	s := servertest.NewCIMDStandIn(t)
	const honest = "https://claude.ai/oauth/claude-code-client-metadata"
	e, wc := servertest.NewCounted(t, servertest.TrustLoopback, func(c *server.Config) { c.CIMD = s.Resolver(t, authserver.CIMDFetchTimeout, honest) })
	get := func(u, xff string) servertest.Page {
		return servertest.CIMDAuthorizeFrom(t, e, servertest.CIMDClient(u, "http://127.0.0.1:53682/callback"), "memory:read", xff)
	}
	var got map[int]int
	n := statementsOf(wc, func() {
		got = statuses(100, func(i int) int {
			return get("https://claude.ai/junk/"+strconv.Itoa(i), servertest.V6("2001:db8:7:1::", i)).Status
		})
	})
	if got[http.StatusBadRequest] != 100 || n != 0 || s.TotalFetches() != 0 {
		t.Errorf("100 unlisted URLs: %v, %d statements, %d fetches; want 100 × 400, none, none", got, n, s.TotalFetches())
	}
	p := get("https://claude.ai/junk/x", "198.51.100.20")
	if body := html.UnescapeString(p.Body); !strings.Contains(body, "HEYAIRA_CIMD_CLIENTS=https://claude.ai/junk/x") || !strings.Contains(body, authserver.CIMDNotListed) {
		t.Errorf("the unlisted URL's page does not name the setting to add: %s", p.Body)
	}
	if p := get(honest, "2001:db8:7:1::99"); p.Status != http.StatusSeeOther || p.Header.Get("Location") != "/signin" {
		t.Fatalf("the listed client from the junk's network: %d %s", p.Status, p.Body)
	}
	if n := s.Fetches(honest); n != 1 {
		t.Errorf("the listed client's document fetched %d times, want 1", n)
	}
}

// Row VC-08: a concurrent wave of junk bearers from one address opens
// no database connection and sends no statement, while a valid token from
// the same address is served during the wave. Before the redesign the
// gate's bucket was peeked, not reserved, and one such wave took all 16
// connections of the pool.
func TestVC08AJunkWaveOpensNoConnection(t *testing.T) {
	t.Parallel()
	e, wc := servertest.NewCounted(t, servertest.TrustLoopback)
	tn := e.NewTenant("o", "r")
	good := e.Token(tn, "memory:read")
	const network = "203.0.113.93"
	wc.ResetMaxOpen()
	before := wc.Counts()
	var wg sync.WaitGroup
	statuses := make(chan int, 100)
	for range 100 {
		wg.Go(func() { statuses <- bearerFrom(e, junkBearer(e), network).Status })
	}
	wg.Wait()
	close(statuses)
	after := wc.Counts().Sub(before)
	for s := range statuses {
		if s != http.StatusUnauthorized {
			t.Errorf("a junk bearer of the wave: %d, want 401", s)
		}
	}
	if after.Statements != 0 || wc.Counts().MaxOpen > before.Open {
		t.Errorf("a wave of 100 junk bearers: %d statements, %d connections open at most (%d before); want none more",
			after.Statements, wc.Counts().MaxOpen, before.Open)
	}
	if r := bearerFrom(e, good, network); r.Status != http.StatusOK {
		t.Errorf("the valid token from the wave's address: %d %s", r.Status, r.Raw)
	}
}

// registerFrom posts one dynamic registration as the client at xff.
func registerFrom(e *servertest.Env, xff string) int {
	e.T.Helper()
	return e.PostBody("/oauth/register", "application/json",
		`{"redirect_uris":["http://127.0.0.1/cb"],"client_name":"x","token_endpoint_auth_method":"none"}`, "X-Forwarded-For", xff).Status
}

// Row VC-05: registration, which presents no credential, is
// keyed by an IPv6 client's /64, so rotating addresses within it meets the
// limits of one address; and its server-wide budget is shared out, so that
// neither a /64 nor a /48 of them can spend it for everyone. Junk bearers
// from rotating addresses cost nothing to key (VC-01).
func TestVC05IPv6IsKeyedByItsPrefix(t *testing.T) {
	t.Parallel()
	e := servertest.New(t, servertest.TrustLoopback)
	created := statuses(110, func(i int) int { return registerFrom(e, servertest.V6("2001:db8:1:1::", i)) })
	if created[http.StatusCreated] != authserver.RegisterPerIPBurst {
		t.Errorf("registrations from one /64: %v, want %d created", created, authserver.RegisterPerIPBurst)
	}
	// One /48, many /64s: its share of the server-wide budget.
	wide := statuses(authserver.RegisterWideBurst+10, func(i int) int {
		return registerFrom(e, servertest.V6("2001:db8:3:"+strconv.FormatInt(int64(i), 16)+"::", 1))
	})
	if wide[http.StatusCreated] != authserver.RegisterWideBurst {
		t.Errorf("registrations from %d /64s of one /48: %v, want %d created", authserver.RegisterWideBurst+10, wide, authserver.RegisterWideBurst)
	}
	for _, honest := range []string{"198.51.100.99", "2001:db8:9::1"} {
		if s := registerFrom(e, honest); s != http.StatusCreated {
			t.Errorf("an honest client at %s after both: %d", honest, s)
		}
	}
}

// Row VC-06: HEYAIRA_TRUSTED_PROXIES refuses a /0, which would
// let every client name its own address, and reports every range that is
// wider than one address, for the start-up warning (internal/app/serve.go).
func TestVC06TrustedProxiesAreAddresses(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"0.0.0.0/0", "10.0.0.1, ::/0"} {
		if _, err := web.ParseTrustedProxies(s); err == nil || !strings.Contains(err.Error(), "every address") {
			t.Errorf("%q: %v, want a refusal", s, err)
		}
	}
	trusted, err := web.ParseTrustedProxies("10.0.0.0/24, 10.0.1.5, fd00::/8, 2001:db8::7")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(web.TrustedRanges(trusted), ","); got != "10.0.0.0/24,fd00::/8" {
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
// arrived holds nothing another request needs: a client of the address
// sends the headers of a refresh and stalls in the body, and the address's
// valid refresh is answered meanwhile. (It once held a slot of the refusal
// lane until ReadTimeout.)
func TestVC09AStalledTokenBodyHoldsNothing(t *testing.T) {
	t.Parallel()
	e := servertest.New(t)
	tn := e.NewTenant("o", "r")
	c := e.Register("http://127.0.0.1/cb")
	rt := servertest.Str(e.Tokens(t, tn, c, "memory:read").Body, "refresh_token")
	started := make(chan struct{})
	h := e.Srv.Config.Handler
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
	fmt.Fprintf(stall, "POST /oauth/token HTTP/1.1\r\nHost: %s\r\nX-Stall: 1\r\nContent-Type: application/x-www-form-urlencoded\r\n"+
		"Content-Length: 1000\r\n\r\ngrant_type=refresh_token&", srv.Listener.Addr())
	<-started // the handler is reading the stalled body

	done := make(chan int, 1)
	go func() {
		resp, err := http.PostForm(srv.URL+"/oauth/token", url.Values{"grant_type": {"refresh_token"}, "client_id": {c.ID}, "refresh_token": {rt}})
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
			t.Errorf("the address's valid refresh beside a stalled body: %d, want 200", status)
		}
	case <-time.After(30 * time.Second):
		t.Error("the address's valid refresh waited behind a request whose body never came")
	}
}

// Row VC-10 (review of 2026-12-04): a listed client-ID URL is fetched when
// it is first named, whatever else is being asked meanwhile; unlisted URLs
// named in between charge nothing of its budget. (It once shared four
// server-wide fetch slots and the caller's network's share with made-up
// URLs.)
func TestVC10UnlistedURLsChargeNothing(t *testing.T) {
	t.Parallel()
	s := servertest.NewCIMDStandIn(t)
	const honest = "https://vscode.dev/oauth/client-metadata.json"
	e := servertest.New(t, servertest.TrustLoopback, func(c *server.Config) { c.CIMD = s.Resolver(t, authserver.CIMDFetchTimeout, honest) })
	get := func(u string) int {
		return servertest.CIMDAuthorizeFrom(t, e, servertest.CIMDClient(u, "http://127.0.0.1:33418/"), "memory:read", "198.51.100.70").Status
	}
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() { get("https://vscode.dev/busy/" + strconv.Itoa(i)) })
	}
	wg.Wait()
	for i := range authserver.CIMDURLBurst {
		e.Clock.Advance(authserver.CIMDStaleFor) // each authorization finds the document stale
		if status := get(honest); status != http.StatusSeeOther {
			t.Fatalf("the listed URL, time %d, after unlisted ones: %d", i+1, status)
		}
	}
	if n := s.Fetches(honest); n != authserver.CIMDURLBurst {
		t.Errorf("the listed URL fetched %d times, want %d (its own budget, untouched by the others)", n, authserver.CIMDURLBurst)
	}
}
