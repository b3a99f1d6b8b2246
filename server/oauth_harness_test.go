package server

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"heyaira/oauth"
	"heyaira/store"
)

// This file is the OAuth tests' harness: a browser (cookie jar, no
// automatic redirects), a hand-written client for the JSON endpoints, and
// helpers that run the whole flow. Only net/http: no OAuth library.

// testClock is the clock of Config.Now in tests: it stands still unless the
// test advances it, so that no limiter refills and no deadline passes
// because the machine is slow. Sessions and sign-in links use the
// database clock and are not affected.
type testClock struct {
	base   time.Time
	offset atomic.Int64
}

func newTestClock() *testClock               { return &testClock{base: time.Now()} }
func (c *testClock) now() time.Time          { return c.base.Add(time.Duration(c.offset.Load())) }
func (c *testClock) advance(d time.Duration) { c.offset.Add(int64(d)) }

// newOAuthEnv is a testEnv and its clock.
func newOAuthEnv(t *testing.T) (*testEnv, *testClock) {
	t.Helper()
	e := newTestEnv(t)
	return e, e.clock
}

// browser is a user agent with its own cookies that does not follow redirects.
type browser struct {
	t *testing.T
	e *testEnv
	c *http.Client
}

func (e *testEnv) browser(t *testing.T) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, e: e, c: &http.Client{Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

type page struct {
	status int
	header http.Header
	body   string
}

func (b *browser) do(req *http.Request) page {
	b.t.Helper()
	resp, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return page{resp.StatusCode, resp.Header, string(body)}
}

func (b *browser) get(path string) page {
	b.t.Helper()
	req, _ := http.NewRequest("GET", b.e.srv.URL+path, nil)
	return b.do(req)
}

func (b *browser) post(path string, form url.Values) page {
	b.t.Helper()
	return b.postRaw(path, form.Encode())
}

func (b *browser) postRaw(path, body string) page {
	b.t.Helper()
	req, _ := http.NewRequest("POST", b.e.srv.URL+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return b.do(req)
}

var hiddenRE = regexp.MustCompile(`<input type="hidden" name="([a-z]+)" value="([^"]*)">`)

// hidden returns the hidden inputs of a page's form.
func hidden(body string) url.Values {
	v := url.Values{}
	for _, m := range hiddenRE.FindAllStringSubmatch(body, -1) {
		v.Set(m[1], m[2])
	}
	return v
}

// signinLink makes a one-time link for the principal, as the admin CLI does.
func (e *testEnv) signinLink(principal string) string {
	e.t.Helper()
	// Its embedded expiry is on the server's clock, which a test may move.
	secret := e.secrets.Mint(oauth.PrefixSignin, e.cfg.Now().Add(store.SigninLinkTTL))
	if _, err := e.db.CreateSigninLink(e.t.Context(), principal, oauth.Hash(secret), store.SigninLinkTTL); err != nil {
		e.t.Fatal(err)
	}
	e.canaries.secret("sign-in link", secret)
	return secret
}

func randomB64() string {
	b := make([]byte, 32)
	rand.Read(b)
	return oauthB64(b)
}

// signIn redeems a fresh link in the browser and returns the POST's answer.
func (b *browser) signIn(principal string) page {
	b.t.Helper()
	link := b.e.signinLink(principal)
	p := b.get("/signin?token=" + link)
	if p.status != http.StatusOK {
		b.t.Fatalf("GET /signin: %d %s", p.status, p.body)
	}
	return b.post("/signin", hidden(p.body))
}

// client is a registered public client with a PKCE pair.
type client struct {
	id, redirect, verifier string
}

// register registers a client through DCR and returns it.
func (e *testEnv) register(redirectURIs ...string) client {
	e.t.Helper()
	r := e.postJSON("/oauth/register", map[string]any{"redirect_uris": redirectURIs, "client_name": "Test Client",
		"grant_types": []string{"authorization_code", "refresh_token"}, "token_endpoint_auth_method": "none"})
	if r.status != http.StatusCreated {
		e.t.Fatalf("register: %d %s", r.status, r.raw)
	}
	return client{id: r.body["client_id"].(string), redirect: redirectURIs[0], verifier: oauthB64(bytes.Repeat([]byte{9}, 40))}
}

func (e *testEnv) postJSON(path string, v any) reply {
	e.t.Helper()
	b, _ := json.Marshal(v)
	return e.postBody(path, "application/json", string(b))
}

func (e *testEnv) postBody(path, contentType, body string, headers ...string) reply {
	e.t.Helper()
	req, _ := http.NewRequest("POST", e.srv.URL+path, strings.NewReader(body))
	req.Header.Set("Content-Type", contentType)
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i] == "Host" {
			req.Host = headers[i+1] // Go sends req.Host, not Header["Host"]
			continue
		}
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	r := reply{status: resp.StatusCode, header: resp.Header}
	r.raw, _ = io.ReadAll(resp.Body)
	json.Unmarshal(r.raw, &r.body)
	return r
}

// form posts a form to a JSON endpoint (token, revoke).
func (e *testEnv) form(path string, v url.Values) reply {
	e.t.Helper()
	return e.postBody(path, "application/x-www-form-urlencoded", v.Encode())
}

// authorizeQuery is a complete, valid authorization request for c.
func (c client) authorizeQuery(scope string) url.Values {
	q := url.Values{"response_type": {"code"}, "client_id": {c.id}, "redirect_uri": {c.redirect},
		"code_challenge": {oauth.S256(c.verifier)}, "code_challenge_method": {"S256"}, "state": {"st-1"}}
	if scope != "" {
		q.Set("scope", scope)
	}
	return q
}

// consent GETs the authorization URL and expects the consent page.
func (b *browser) consent(q url.Values) page {
	b.t.Helper()
	p := b.get("/oauth/authorize?" + q.Encode())
	if p.status != http.StatusOK || !strings.Contains(p.body, `name="decision"`) {
		b.t.Fatalf("authorize: want consent page, got %d %s %s", p.status, p.header.Get("Location"), p.body)
	}
	return p
}

// approve answers a consent page with the given project and scopes.
func (b *browser) approve(consent page, project string, scopes ...string) page {
	b.t.Helper()
	f := hidden(consent.body)
	f.Set("decision", "approve")
	f.Set("project", project)
	for _, s := range scopes {
		f.Add("scope", s)
	}
	return b.post("/oauth/authorize", f)
}

// codeFrom extracts the code from a 303 back to the client.
func codeFrom(t *testing.T, p page) string {
	t.Helper()
	if p.status != http.StatusSeeOther {
		t.Fatalf("want 303 to the client, got %d %s", p.status, p.body)
	}
	u, err := url.Parse(p.header.Get("Location"))
	if err != nil || u.Query().Get("code") == "" {
		t.Fatalf("no code in %q", p.header.Get("Location"))
	}
	return u.Query().Get("code")
}

// exchange redeems a code at the token endpoint.
func (e *testEnv) exchange(c client, code string, extra ...string) reply {
	e.t.Helper()
	v := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "code_verifier": {c.verifier},
		"redirect_uri": {c.redirect}, "client_id": {c.id}, "resource": {e.cfg.PublicURL + "/mcp"}}
	for i := 0; i+1 < len(extra); i += 2 {
		if extra[i+1] == "" {
			v.Del(extra[i])
			continue
		}
		v.Set(extra[i], extra[i+1])
	}
	e.canaries.secret("authorization code", code)
	e.canaries.secret("PKCE verifier", c.verifier)
	return e.tokenCanaries(e.form("/oauth/token", v))
}

// tokenCanaries registers the secrets of a token response for the LG-01
// scan and returns it unchanged.
func (e *testEnv) tokenCanaries(r reply) reply {
	e.canaries.secret("access token", str(r.body, "access_token"))
	e.canaries.secret("refresh token", str(r.body, "refresh_token"))
	return r
}

// refresh rotates a refresh token.
func (e *testEnv) refresh(c client, rt string, extra ...string) reply {
	e.t.Helper()
	v := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}, "client_id": {c.id}}
	for i := 0; i+1 < len(extra); i += 2 {
		v.Set(extra[i], extra[i+1])
	}
	e.canaries.secret("refresh token", rt)
	return e.tokenCanaries(e.form("/oauth/token", v))
}

// flow runs sign-in, authorization and consent, returning the code.
func (e *testEnv) flow(t *testing.T, tn tenant, c client, scope string, approved ...string) string {
	t.Helper()
	b := e.browser(t)
	b.signIn(tn.principal)
	return codeFrom(t, b.approve(b.consent(c.authorizeQuery(scope)), tn.project, approved...))
}

// tokens runs the flow and the code exchange, returning the token response.
func (e *testEnv) tokens(t *testing.T, tn tenant, c client, approved ...string) reply {
	t.Helper()
	r := e.exchange(c, e.flow(t, tn, c, strings.Join(approved, " "), approved...))
	if r.status != http.StatusOK {
		t.Fatalf("exchange: %d %s", r.status, r.raw)
	}
	return r
}

func str(m map[string]any, k string) string { s, _ := m[k].(string); return s }

// mcpStatus calls tools/list with a bearer token and returns the HTTP status.
func (e *testEnv) mcpStatus(token string) int {
	e.t.Helper()
	return e.rpc(token, "tools/list", nil).status
}

func oauthB64(b []byte) string { return base64URL.EncodeToString(b) }

var base64URL = base64.RawURLEncoding

func base64Std(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// clientRow is the oauth_clients row id of a client registered through DCR.
func (e *testEnv) clientRow(c client) string {
	e.t.Helper()
	row, ok := e.secrets.ClientRow(c.id)
	if !ok {
		e.t.Fatalf("client_id %q was not assigned by the server", c.id)
	}
	return row
}
