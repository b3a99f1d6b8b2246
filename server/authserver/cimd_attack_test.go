package authserver_test

import (
	"context"
	"html"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"heyaira/server"
	"heyaira/server/authserver"
	"heyaira/server/internal/servertest"
)

// cimdRefused GETs /oauth/authorize for a document URL and checks that it
// is refused with a page (never a redirect) naming reason.
func cimdRefused(t *testing.T, e *servertest.Env, url, redirect string, status int, reason string) {
	t.Helper()
	cimdRefusedFrom(t, e, "", url, redirect, status, reason)
}

// cimdRefusedFrom is cimdRefused as the client at xff (cimdAuthorizeFrom).
func cimdRefusedFrom(t *testing.T, e *servertest.Env, xff, url, redirect string, status int, reason string) {
	t.Helper()
	p := servertest.CIMDAuthorizeFrom(t, e, servertest.CIMDClient(url, redirect), "memory:read", xff)
	if p.Status != status || p.Header.Get("Location") != "" || !strings.Contains(p.Body, "reason: "+reason+")") {
		t.Errorf("%s: got %d Location=%q %s; want %d %s", url, p.Status, p.Header.Get("Location"), p.Body, status, reason)
	}
}

// TestCMAttacks: each hostile document or URL is refused with its own
// reason, as a page, and reaches nothing it should not.
// Rows CM-01, CM-02, CM-04, CM-05, CM-06, VC-07 (docs/security-tests.md).
func TestCMAttacks(t *testing.T) {
	t.Parallel()
	s := servertest.NewCIMDStandIn(t)
	const base = "https://docs.example/"
	var listed []string
	for _, p := range []string{"redirect", "target", "big", "chunked", "impostor", "secret", "expires", "jwk", "oct", "badjwks",
		"basic", "jwtauth", "dupfield", "html", "missing", "array", "latin1", "nameless", "js"} {
		listed = append(listed, base+p)
	}
	cimd := s.Resolver(t, authserver.CIMDFetchTimeout, listed...)
	e := servertest.New(t, servertest.TrustLoopback, func(c *server.Config) { c.CIMD = cimd })
	sent := 0
	cimdRefused := func(t *testing.T, e *servertest.Env, url, redirect string, status int, reason string) {
		t.Helper()
		sent++
		cimdRefusedFrom(t, e, servertest.DistinctNetwork(sent), url, redirect, status, reason)
	}
	doc := func(id string, extra string) []byte {
		return []byte(`{"client_id":"` + id + `","client_name":"Docs","redirect_uris":["https://docs.example/cb"]` + extra + `}`)
	}
	e.Canaries.Secret("a document's client_secret", cimdCanary) // LG-01: no document content is logged

	// CM-01: a redirect is refused, its target never fetched.
	s.Handle(base+"redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/target", http.StatusFound)
	})
	s.ServeJSON(base+"target", doc(base+"target", ""))
	cimdRefused(t, e, base+"redirect", "https://docs.example/cb", http.StatusBadGateway, authserver.CIMDRedirect)
	if n := s.Fetches(base + "target"); n != 0 {
		t.Errorf("CM-01: the redirect target was fetched %d times", n)
	}

	// CM-02: a 6 KB document, with and without Content-Length.
	big := doc(base+"big", `,"pad":"`+strings.Repeat("x", 6*1024)+`"`)
	s.ServeJSON(base+"big", big)
	cimdRefused(t, e, base+"big", "https://docs.example/cb", http.StatusBadGateway, authserver.CIMDTooLarge)
	s.Handle(base+"chunked", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		for i := 0; i < len(big); i += 1024 {
			w.Write(big[i:min(i+1024, len(big))])
			w.(http.Flusher).Flush()
		}
	})
	cimdRefused(t, e, base+"chunked", "https://docs.example/cb", http.StatusBadGateway, authserver.CIMDTooLarge)

	// CM-04: client_id names another document.
	s.ServeJSON(base+"impostor", doc("https://claude.ai/oauth/claude-code-client-metadata", ""))
	cimdRefused(t, e, base+"impostor", "https://docs.example/cb", http.StatusBadRequest, authserver.CIMDClientIDMismatch)

	// CM-06: a secret, a symmetric method, a private key.
	for path, extra := range map[string]string{
		"secret":   `,"client_secret":"` + cimdCanary + `"`,
		"expires":  `,"client_secret_expires_at":0`,
		"jwk":      `,"jwks":{"keys":[{"kty":"RSA","n":"AQAB","e":"AQAB","d":"AQAB"}]}`,
		"oct":      `,"jwks":{"keys":[{"kty":"oct","k":"c2VjcmV0"}]}`,
		"badjwks":  `,"jwks":"keys"`,
		"basic":    `,"token_endpoint_auth_method":"client_secret_basic"`,
		"jwtauth":  `,"token_endpoint_auth_method":"private_key_jwt"`,
		"dupfield": `,"client_name":"Other"`,
	} {
		s.ServeJSON(base+path, doc(base+path, extra))
		want, status := authserver.CIMDSecret, http.StatusBadRequest
		switch path {
		case "basic", "jwtauth":
			want = authserver.CIMDAuthMethod
		case "dupfield":
			want = authserver.CIMDInvalidJSON
		}
		cimdRefused(t, e, base+path, "https://docs.example/cb", status, want)
	}

	// Other documents that are not one: wrong media type, status, shape.
	s.Handle(base+"html", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write(doc(base+"html", ""))
	})
	cimdRefused(t, e, base+"html", "https://docs.example/cb", http.StatusBadGateway, authserver.CIMDBadContentType)
	cimdRefused(t, e, base+"missing", "https://docs.example/cb", http.StatusBadGateway, authserver.CIMDBadStatus)
	s.ServeJSON(base+"array", []byte(`[1]`))
	cimdRefused(t, e, base+"array", "https://docs.example/cb", http.StatusBadRequest, authserver.CIMDInvalidJSON)
	s.ServeJSON(base+"latin1", []byte("{\"client_id\":\""+base+"latin1\",\"client_name\":\"\xe9\",\"redirect_uris\":[\"https://docs.example/cb\"]}"))
	cimdRefused(t, e, base+"latin1", "https://docs.example/cb", http.StatusBadRequest, authserver.CIMDInvalidJSON)
	s.ServeJSON(base+"nameless", []byte(`{"client_id":"`+base+`nameless","redirect_uris":["https://docs.example/cb"]}`))
	cimdRefused(t, e, base+"nameless", "https://docs.example/cb", http.StatusBadRequest, authserver.CIMDInvalidDocument)
	s.ServeJSON(base+"js", []byte(`{"client_id":"`+base+`js","client_name":"x","redirect_uris":["javascript:alert(1)"]}`))
	cimdRefused(t, e, base+"js", "javascript:alert(1)", http.StatusBadRequest, authserver.CIMDInvalidDocument)

	// CM-05: a URL outside the list, and URLs the gate refuses, are refused
	// before any connection.
	before := len(s.Dialed())
	for url, reason := range map[string]string{
		"https://outside.example/client.json":                 authserver.CIMDNotListed,
		"https://claude.ai/oauth/claude-code-client-metadata": authserver.CIMDNotListed,
		"https://docs.example/client.json":                    authserver.CIMDNotListed,
		"https://docs.example/a/../client.json":               "cimd_url_dot_segment",
		"https://docs.example/a/%2e%2E/client":                "cimd_url_dot_segment",
		"https://docs.example/client.json?x=1":                "cimd_url_query",
		"https://docs.example:8443/client.json":               "cimd_url_invalid",
		"https://user@docs.example/client.json":               "cimd_url_invalid",
		"https://docs.example/":                               "cimd_url_invalid",
		"https://docs.example\\@evil.example/x":               "cimd_url_invalid",
		"https://127.0.0.1/client.json":                       "cimd_url_invalid",
		"HTTPS://docs.example/client.json":                    "cimd_url_invalid",
		"https://DOCS.example/client.json":                    "cimd_url_invalid",
		"https://docs.example/client.json#frag":               "cimd_url_invalid",
		"https://docs.example/a%2fb":                          "cimd_url_invalid",
		"https://docs.example/" + strings.Repeat("a", 600):    "cimd_url_invalid",
	} {
		cimdRefused(t, e, url, "https://docs.example/cb", http.StatusBadRequest, reason)
	}
	if got := s.Dialed()[before:]; len(got) != 0 {
		t.Errorf("CM-05: refused URLs dialed %v", got)
	}
}

const cimdCanary = "cimd-canary-3f9a1c0e7b5d4e2a8c6b"

// TestCMSlowLoris: a body that never ends is cut at the fetch deadline
// (10 s in production; short here so the test is quick).
// Row CM-03 (docs/security-tests.md).
func TestCMSlowLoris(t *testing.T) {
	t.Parallel()
	s := servertest.NewCIMDStandIn(t)
	// 2 s rather than less: under a busy parallel run the TLS handshake alone
	// can take a few hundred milliseconds, and the deadline must fall on the body.
	e := servertest.New(t, func(c *server.Config) { c.CIMD = s.Resolver(t, 2*time.Second, "https://docs.example/slow") })
	url := "https://docs.example/slow"
	// The rest never comes, not even the end of the chunked body when the
	// fetcher gives up: were the handler to return on its request's end, the
	// server's final chunk could make the cut body a clean EOF. It returns at
	// cleanup, before the stand-in closes (cleanups run last first).
	never := make(chan struct{})
	t.Cleanup(func() { close(never) })
	s.Handle(url, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"client_id":`))
		w.(http.Flusher).Flush()
		<-never
	})
	cimdRefused(t, e, url, "https://docs.example/cb", http.StatusBadGateway, authserver.CIMDTimeout)
}

// TestCMCachedFailure: failures are never stored. A fetch that fails is
// tried again by the next authorization; a stale row whose new document
// is invalid is neither used nor overwritten.
// Row CM-08 (docs/security-tests.md).
func TestCMCachedFailure(t *testing.T) {
	t.Parallel()
	s := servertest.NewCIMDStandIn(t)
	clock := servertest.NewClock()
	e := servertest.New(t, func(c *server.Config) {
		c.CIMD = s.Resolver(t, authserver.CIMDFetchTimeout, "https://docs.example/flaky")
		c.Now = clock.Now
	})
	url := "https://docs.example/flaky"
	var mu sync.Mutex
	body := ""
	s.Handle(url, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if body == "" {
			http.Error(w, "down", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(body))
	})
	set := func(b string) { mu.Lock(); body = b; mu.Unlock() }
	cimdRefused(t, e, url, "https://docs.example/cb", http.StatusBadGateway, authserver.CIMDBadStatus)
	set(`{"client_id":"` + url + `","client_name":"Flaky","redirect_uris":["https://docs.example/cb"]}`)
	get := func() servertest.Page {
		return e.Browser(t).Get("/oauth/authorize?" + servertest.CIMDClient(url, "https://docs.example/cb").AuthorizeQuery("memory:read").Encode())
	}
	if p := get(); p.Status != http.StatusSeeOther || p.Header.Get("Location") != "/signin" {
		t.Fatalf("CM-08: after the outage the document was not fetched again: %d %s", p.Status, p.Body)
	}
	if n := s.Fetches(url); n != 2 {
		t.Errorf("CM-08: %d fetches, want 2", n)
	}
	clock.Advance(2 * time.Hour) // the row is stale
	set(`{"client_id":"` + url + `","client_name":"Flaky","redirect_uris":["https://evil.example/cb"],"client_secret":"x"}`)
	cimdRefused(t, e, url, "https://docs.example/cb", http.StatusBadRequest, authserver.CIMDSecret)
	if got := e.QueryString(`SELECT array_to_string(redirect_uris, ' ') FROM oauth_clients WHERE metadata_url = $1`, url); got != "https://docs.example/cb" {
		t.Errorf("CM-08: an invalid document changed the stored row to %q", got)
	}
	cimdRefused(t, e, url, "https://evil.example/cb", http.StatusBadRequest, authserver.CIMDSecret)
}

// TestCMForbiddenAddresses: a host whose name resolves to loopback, the
// cloud metadata address or an IPv4-mapped private address is never
// connected to. The test's resolver maps the name; the production dialer
// (authserver.NewCIMDDialer, with its Control hook) does the rest, and the test
// records every address the Control hook saw and what it answered.
// Row CM-07 (docs/security-tests.md).
func TestCMForbiddenAddresses(t *testing.T) {
	t.Parallel()
	for _, ip := range []string{"127.0.0.1", "169.254.169.254", "::ffff:10.0.0.1"} {
		var mu sync.Mutex
		var seen []string
		var allowed int
		d := authserver.NewCIMDDialer()
		check := d.Control
		d.Control = func(network, address string, c syscall.RawConn) error {
			err := check(network, address, c)
			mu.Lock()
			seen = append(seen, address)
			if err == nil {
				allowed++
			}
			mu.Unlock()
			return err
		}
		dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
			_, port, _ := net.SplitHostPort(addr)
			return d.DialContext(ctx, network, net.JoinHostPort(ip, port)) // "DNS": docs.example → ip
		}
		cimd, err := authserver.NewCIMDWithTimeout([]string{"https://docs.example/client.json"}, dial, nil, authserver.CIMDFetchTimeout)
		if err != nil {
			t.Fatal(err)
		}
		e := servertest.New(t, func(c *server.Config) { c.CIMD = cimd })
		cimdRefused(t, e, "https://docs.example/client.json", "https://docs.example/cb", http.StatusBadGateway, authserver.CIMDForbiddenAddr)
		mu.Lock()
		if len(seen) == 0 || allowed != 0 {
			t.Errorf("CM-07 %s: the Control hook saw %v and allowed %d", ip, seen, allowed)
		}
		mu.Unlock()
	}
}

// TestCMFlood: concurrent /authorize requests with distinct made-up
// document URLs on a listed URL's host are all refused at once with the
// 400 page, and none causes a connection; the listed URL is fetched once
// meanwhile.
// Rows CM-09, VC-07 (docs/security-tests.md).
func TestCMFlood(t *testing.T) {
	t.Parallel()
	s := servertest.NewCIMDStandIn(t)
	const listed = "https://docs.example/client.json"
	e := servertest.New(t, servertest.TrustLoopback, func(c *server.Config) { c.CIMD = s.Resolver(t, authserver.CIMDFetchTimeout, listed) })
	s.ServeJSON(listed, []byte(`{"client_id":"`+listed+`","client_name":"Docs","redirect_uris":["https://docs.example/cb"]}`))
	const n = 40
	statuses := make(chan int, n+1)
	for i := range n {
		go func() {
			u := "https://docs.example/flood/" + strings.Repeat("x", i+1)
			statuses <- servertest.CIMDAuthorizeFrom(t, e, servertest.CIMDClient(u, "https://docs.example/cb"), "", servertest.DistinctNetwork(i)).Status
		}()
	}
	go func() {
		statuses <- servertest.CIMDAuthorizeFrom(t, e, servertest.CIMDClient(listed, "https://docs.example/cb"), "", servertest.DistinctNetwork(n)).Status
	}()
	count := map[int]int{}
	for range n + 1 {
		count[<-statuses]++
	}
	if count[http.StatusBadRequest] != n || count[http.StatusSeeOther] != 1 {
		t.Errorf("CM-09: statuses %v, want %d × 400 and the listed URL's 303", count, n)
	}
	if total, dials := s.TotalFetches(), len(s.Dialed()); total != 1 || dials != 1 {
		t.Errorf("CM-09: %d fetches and %d connections, want the listed URL's one", total, dials)
	}
}

// TestCIMDErrorPageTellsTheAdministrator: a client that uses a metadata
// document (Claude Code, Codex) never falls back to registering itself, so
// when the server cannot fetch the document the user waits on the error
// page for good. The page therefore says what the administrator must do,
// naming the host and the listed URL; the log says the same with the reason.
func TestCIMDErrorPageTellsTheAdministrator(t *testing.T) {
	t.Parallel()
	const url = "https://claude.ai/oauth/claude-code-client-metadata"
	// A server without egress: every connection fails.
	noRoute := func(ctx context.Context, network, addr string) (net.Conn, error) {
		return nil, &net.OpError{Op: "dial", Net: network, Err: syscall.ENETUNREACH}
	}
	cimd, err := authserver.NewCIMDWithTimeout([]string{url}, noRoute, nil, authserver.CIMDFetchTimeout)
	if err != nil {
		t.Fatal(err)
	}
	e := servertest.New(t, func(c *server.Config) { c.CIMD = cimd }) // the clock stands still: the URL's budget never refills
	page := func(wantStatus int) (string, http.Header) {
		t.Helper()
		p := e.Browser(t).Get("/oauth/authorize?" + servertest.CIMDClient(url, "http://127.0.0.1:4567/callback").AuthorizeQuery("memory:read").Encode())
		if p.Status != wantStatus || p.Header.Get("Location") != "" {
			t.Fatalf("got %d Location=%q; want %d and no redirect\n%s", p.Status, p.Header.Get("Location"), wantStatus, p.Body)
		}
		return html.UnescapeString(p.Body), p.Header
	}
	admin := []string{"Application not recognised", "let the server reach https://claude.ai",
		"remove " + url + " from HEYAIRA_CIMD_CLIENTS so that the application registers itself instead"}

	var body string
	for range authserver.CIMDURLBurst { // each fetch of the URL's budget fails
		body, _ = page(http.StatusBadGateway)
	}
	for _, want := range append(admin, "could not fetch this application's description from claude.ai (reason: cimd_fetch_failed)",
		"Starting again will not help until then") {
		if !strings.Contains(body, want) {
			t.Errorf("502 page lacks %q:\n%s", want, body)
		}
	}
	if log := e.Logs.String(); !strings.Contains(log, `"msg":"cimd document unusable"`) ||
		!strings.Contains(log, `"host":"claude.ai"`) || !strings.Contains(log, `"reason":"cimd_fetch_failed"`) {
		t.Errorf("no WARN line naming the host and the reason:\n%s", log)
	}

	body, header := page(http.StatusTooManyRequests)
	if header.Get("Retry-After") == "" {
		t.Error("429 without Retry-After")
	}
	for _, want := range append(admin, "(reason: cimd_rate_limited)", "Try again from your application in "+header.Get("Retry-After")+" seconds") {
		if !strings.Contains(body, want) {
			t.Errorf("429 page lacks %q:\n%s", want, body)
		}
	}
}

// TestCIMDRefusedDocumentPage: a document its host serves but this server
// refuses names the host and the way out (unlisting it), and a 404 from the
// host names it too.
func TestCIMDRefusedDocumentPage(t *testing.T) {
	t.Parallel()
	s := servertest.NewCIMDStandIn(t)
	e := servertest.New(t, func(c *server.Config) {
		c.CIMD = s.Resolver(t, authserver.CIMDFetchTimeout, "https://docs.example/nameless", "https://docs.example/missing")
	})
	s.ServeJSON("https://docs.example/nameless", []byte(`{"client_id":"https://docs.example/nameless","redirect_uris":["https://docs.example/cb"]}`))
	for url, want := range map[string]struct {
		status int
		text   string
	}{
		"https://docs.example/nameless": {http.StatusBadRequest,
			"The description this application publishes on docs.example is not one this server accepts (reason: cimd_invalid_document). " +
				"Your administrator can remove https://docs.example/nameless from HEYAIRA_CIMD_CLIENTS so that the application registers itself instead."},
		"https://docs.example/missing": {http.StatusBadGateway,
			"This server fetched this application's description from docs.example, but the answer cannot be used (reason: cimd_fetch_status)."},
	} {
		p := e.Browser(t).Get("/oauth/authorize?" + servertest.CIMDClient(url, "https://docs.example/cb").AuthorizeQuery("memory:read").Encode())
		if body := html.UnescapeString(p.Body); p.Status != want.status || !strings.Contains(body, want.text) {
			t.Errorf("%s: got %d\n%s\nwant %d with %q", url, p.Status, body, want.status, want.text)
		}
	}
}
