package servertest

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
	"testing"

	"heyaira/oauth"
	"heyaira/store"
)

// This file is the OAuth tests' harness: a browser (cookie jar, no
// automatic redirects), a hand-written client for the JSON endpoints, and
// helpers that run the whole flow. Only net/http: no OAuth library.

// NewOAuth is an Env and its clock.
func NewOAuth(t *testing.T) (*Env, *StillClock) {
	t.Helper()
	e := New(t)
	return e, e.Clock
}

// Browser is a user agent with its own cookies that does not follow redirects.
type Browser struct {
	t *testing.T
	e *Env
	C *http.Client
}

func (e *Env) Browser(t *testing.T) *Browser {
	jar, _ := cookiejar.New(nil)
	return &Browser{t: t, e: e, C: &http.Client{Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

type Page struct {
	Status int
	Header http.Header
	Body   string
}

func (b *Browser) Do(req *http.Request) Page {
	b.t.Helper()
	resp, err := b.C.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return Page{resp.StatusCode, resp.Header, string(body)}
}

func (b *Browser) Get(path string) Page {
	b.t.Helper()
	req, _ := http.NewRequest("GET", b.e.Srv.URL+path, nil)
	return b.Do(req)
}

func (b *Browser) Post(path string, form url.Values) Page {
	b.t.Helper()
	return b.postRaw(path, form.Encode())
}

func (b *Browser) postRaw(path, body string) Page {
	b.t.Helper()
	req, _ := http.NewRequest("POST", b.e.Srv.URL+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return b.Do(req)
}

var hiddenRE = regexp.MustCompile(`<input type="hidden" name="([a-z]+)" value="([^"]*)">`)

// Hidden returns the hidden inputs of a page's form.
func Hidden(body string) url.Values {
	v := url.Values{}
	for _, m := range hiddenRE.FindAllStringSubmatch(body, -1) {
		v.Set(m[1], m[2])
	}
	return v
}

// SigninLink makes a one-time link for the principal, as the admin CLI does.
func (e *Env) SigninLink(principal string) string {
	e.T.Helper()
	// Its embedded expiry is on the server's clock, which a test may move.
	secret := e.Secrets.Mint(oauth.PrefixSignin, e.Cfg.Now().Add(store.SigninLinkTTL))
	if _, err := e.DB.CreateSigninLink(e.T.Context(), principal, oauth.Hash(secret), store.SigninLinkTTL); err != nil {
		e.T.Fatal(err)
	}
	e.Canaries.Secret("sign-in link", secret)
	return secret
}

func RandomB64() string {
	b := make([]byte, 32)
	rand.Read(b)
	return OAuthB64(b)
}

// SignIn redeems a fresh link in the browser and returns the POST's answer.
func (b *Browser) SignIn(principal string) Page {
	b.t.Helper()
	link := b.e.SigninLink(principal)
	p := b.Get("/signin?token=" + link)
	if p.Status != http.StatusOK {
		b.t.Fatalf("GET /signin: %d %s", p.Status, p.Body)
	}
	return b.Post("/signin", Hidden(p.Body))
}

// Client is a registered public client with a PKCE pair.
type Client struct {
	ID, Redirect, Verifier string
}

// Register registers a client through DCR and returns it.
func (e *Env) Register(redirectURIs ...string) Client {
	e.T.Helper()
	r := e.PostJSON("/oauth/register", map[string]any{"redirect_uris": redirectURIs, "client_name": "Test Client",
		"grant_types": []string{"authorization_code", "refresh_token"}, "token_endpoint_auth_method": "none"})
	if r.Status != http.StatusCreated {
		e.T.Fatalf("register: %d %s", r.Status, r.Raw)
	}
	return Client{ID: r.Body["client_id"].(string), Redirect: redirectURIs[0], Verifier: OAuthB64(bytes.Repeat([]byte{9}, 40))}
}

func (e *Env) PostJSON(path string, v any) Reply {
	e.T.Helper()
	b, _ := json.Marshal(v)
	return e.PostBody(path, "application/json", string(b))
}

func (e *Env) PostBody(path, contentType, body string, headers ...string) Reply {
	e.T.Helper()
	req, _ := http.NewRequest("POST", e.Srv.URL+path, strings.NewReader(body))
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
		e.T.Fatal(err)
	}
	defer resp.Body.Close()
	r := Reply{Status: resp.StatusCode, Header: resp.Header}
	r.Raw, _ = io.ReadAll(resp.Body)
	json.Unmarshal(r.Raw, &r.Body)
	return r
}

// Form posts a form to a JSON endpoint (token, revoke).
func (e *Env) Form(path string, v url.Values) Reply {
	e.T.Helper()
	return e.PostBody(path, "application/x-www-form-urlencoded", v.Encode())
}

// AuthorizeQuery is a complete, valid authorization request for c.
func (c Client) AuthorizeQuery(scope string) url.Values {
	q := url.Values{"response_type": {"code"}, "client_id": {c.ID}, "redirect_uri": {c.Redirect},
		"code_challenge": {oauth.S256(c.Verifier)}, "code_challenge_method": {"S256"}, "state": {"st-1"}}
	if scope != "" {
		q.Set("scope", scope)
	}
	return q
}

// Consent GETs the authorization URL and expects the consent page.
func (b *Browser) Consent(q url.Values) Page {
	b.t.Helper()
	p := b.Get("/oauth/authorize?" + q.Encode())
	if p.Status != http.StatusOK || !strings.Contains(p.Body, `name="decision"`) {
		b.t.Fatalf("authorize: want consent page, got %d %s %s", p.Status, p.Header.Get("Location"), p.Body)
	}
	return p
}

// Approve answers a consent page with the given project and scopes.
func (b *Browser) Approve(consent Page, project string, scopes ...string) Page {
	b.t.Helper()
	f := Hidden(consent.Body)
	f.Set("decision", "approve")
	f.Set("project", project)
	for _, s := range scopes {
		f.Add("scope", s)
	}
	return b.Post("/oauth/authorize", f)
}

// CodeFrom extracts the code from a 303 back to the client.
func CodeFrom(t *testing.T, p Page) string {
	t.Helper()
	if p.Status != http.StatusSeeOther {
		t.Fatalf("want 303 to the client, got %d %s", p.Status, p.Body)
	}
	u, err := url.Parse(p.Header.Get("Location"))
	if err != nil || u.Query().Get("code") == "" {
		t.Fatalf("no code in %q", p.Header.Get("Location"))
	}
	return u.Query().Get("code")
}

// Exchange redeems a code at the token endpoint.
func (e *Env) Exchange(c Client, code string, extra ...string) Reply {
	e.T.Helper()
	v := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "code_verifier": {c.Verifier},
		"redirect_uri": {c.Redirect}, "client_id": {c.ID}, "resource": {e.Cfg.PublicURL + "/mcp"}}
	for i := 0; i+1 < len(extra); i += 2 {
		if extra[i+1] == "" {
			v.Del(extra[i])
			continue
		}
		v.Set(extra[i], extra[i+1])
	}
	e.Canaries.Secret("authorization code", code)
	e.Canaries.Secret("PKCE verifier", c.Verifier)
	return e.tokenCanaries(e.Form("/oauth/token", v))
}

// tokenCanaries registers the secrets of a token response for the LG-01
// scan and returns it unchanged.
func (e *Env) tokenCanaries(r Reply) Reply {
	e.Canaries.Secret("access token", Str(r.Body, "access_token"))
	e.Canaries.Secret("refresh token", Str(r.Body, "refresh_token"))
	return r
}

// Refresh rotates a refresh token.
func (e *Env) Refresh(c Client, rt string, extra ...string) Reply {
	e.T.Helper()
	v := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}, "client_id": {c.ID}}
	for i := 0; i+1 < len(extra); i += 2 {
		v.Set(extra[i], extra[i+1])
	}
	e.Canaries.Secret("refresh token", rt)
	return e.tokenCanaries(e.Form("/oauth/token", v))
}

// Flow runs sign-in, authorization and consent, returning the code.
func (e *Env) Flow(t *testing.T, tn Tenant, c Client, scope string, approved ...string) string {
	t.Helper()
	b := e.Browser(t)
	b.SignIn(tn.Principal)
	return CodeFrom(t, b.Approve(b.Consent(c.AuthorizeQuery(scope)), tn.Project, approved...))
}

// Tokens runs the flow and the code exchange, returning the token response.
func (e *Env) Tokens(t *testing.T, tn Tenant, c Client, approved ...string) Reply {
	t.Helper()
	r := e.Exchange(c, e.Flow(t, tn, c, strings.Join(approved, " "), approved...))
	if r.Status != http.StatusOK {
		t.Fatalf("exchange: %d %s", r.Status, r.Raw)
	}
	return r
}

func Str(m map[string]any, k string) string { s, _ := m[k].(string); return s }

// MCPStatus calls tools/list with a bearer token and returns the HTTP status.
func (e *Env) MCPStatus(token string) int {
	e.T.Helper()
	return e.RPC(token, "tools/list", nil).Status
}

func OAuthB64(b []byte) string { return Base64URL.EncodeToString(b) }

var Base64URL = base64.RawURLEncoding

func Base64Std(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// ClientRow is the oauth_clients row id of a client registered through DCR.
func (e *Env) ClientRow(c Client) string {
	e.T.Helper()
	row, ok := e.Secrets.ClientRow(c.ID)
	if !ok {
		e.T.Fatalf("client_id %q was not assigned by the server", c.ID)
	}
	return row
}

// ReadJarCookie is the value of the cookie name in b's jar for the server.
func ReadJarCookie(b *Browser, e *Env, name string) string {
	u, _ := url.Parse(e.Srv.URL)
	for _, c := range b.C.Jar.Cookies(u) {
		if c.Name == name {
			return c.Value
		}
	}
	return ""
}
