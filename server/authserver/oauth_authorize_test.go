package authserver_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"heyaira/server/internal/servertest"
)

// TestOA01NearMissRedirectsGetA400Page: before the client and redirect URI
// are validated, every error is a 400 page with no Location, and nothing is
// stored.
func TestOA01NearMissRedirectsGetA400Page(t *testing.T) {
	t.Parallel()
	e, _ := servertest.NewOAuth(t)
	tn := e.NewTenant("o", "r")
	c := e.Register("https://client.example/cb")
	two := e.Register("https://client.example/a", "https://client.example/b")
	b := e.Browser(t)
	b.SignIn(tn.Principal)
	near := []string{
		"https://client.example/cb/", "https://client.example/CB", "https://CLIENT.example/cb",
		"https://client.example/cb?x=1", "https://client.example/cb#f", "https://client.example/cb/../cb",
		"https://client.example/c%62", "https://client.example.evil.com/cb", "https://client.example@evil.com/cb",
		"https://client.example%2540evil.com/cb", "https://evil.com/?https://client.example/cb",
	}
	try := func(name string, q url.Values) {
		t.Helper()
		p := b.Get("/oauth/authorize?" + q.Encode())
		if p.Status != http.StatusBadRequest || p.Header.Get("Location") != "" ||
			!strings.HasPrefix(p.Header.Get("Content-Type"), "text/html") {
			t.Errorf("%s: %d Location=%q", name, p.Status, p.Header.Get("Location"))
		}
	}
	for _, uri := range near {
		q := c.AuthorizeQuery("")
		q.Set("redirect_uri", uri)
		try(uri, q)
	}
	q := c.AuthorizeQuery("")
	q.Set("client_id", "6f1e0c55-0000-4000-8000-000000000000")
	try("unknown client", q)
	q.Set("client_id", "not-a-uuid")
	try("malformed client", q)
	q = two.AuthorizeQuery("")
	q.Del("redirect_uri")
	try("missing redirect_uri with two registered", q)
	// Errors that would otherwise redirect (no PKCE) still get the page
	// when the redirect URI is wrong: the redirect URI is checked first.
	q = c.AuthorizeQuery("")
	q.Set("redirect_uri", "https://evil.example/cb")
	q.Del("code_challenge")
	try("bad redirect and no PKCE", q)
	// A repeated redirect_uri is refused before anything is read.
	p := b.Get("/oauth/authorize?" + c.AuthorizeQuery("").Encode() + "&redirect_uri=https%3A%2F%2Fevil.example%2Fcb")
	if p.Status != http.StatusBadRequest || p.Header.Get("Location") != "" {
		t.Errorf("repeated redirect_uri: %d %q", p.Status, p.Header.Get("Location"))
	}
	if n := e.CountRows("oauth_requests") + e.CountRows("oauth_codes"); n != 0 {
		t.Errorf("%d request/code rows after refusals", n)
	}
	// With one registered URI, redirect_uri may be omitted.
	q = c.AuthorizeQuery("")
	q.Del("redirect_uri")
	b.Consent(q)
}

// TestOA02LoopbackAnyPort: only the port of a loopback redirect may differ;
// localhost and 127.0.0.1 are different hosts. The consent page shows the
// redirect host.
func TestOA02LoopbackAnyPort(t *testing.T) {
	t.Parallel()
	e, _ := servertest.NewOAuth(t)
	tn := e.NewTenant("o", "r")
	c := e.Register("http://127.0.0.1/cb")
	b := e.Browser(t)
	b.SignIn(tn.Principal)
	q := c.AuthorizeQuery("")
	q.Set("redirect_uri", "http://127.0.0.1:53123/cb")
	p := b.Consent(q)
	if !strings.Contains(p.Body, "127.0.0.1:53123") || !strings.Contains(p.Body, "on your own computer") {
		t.Errorf("consent page does not show the loopback host and warning")
	}
	code := servertest.CodeFrom(t, b.Approve(p, tn.Project, "memory:read"))
	c.Redirect = "http://127.0.0.1:53123/cb"
	if r := e.Exchange(c, code); r.Status != http.StatusOK {
		t.Errorf("exchange with the port-bearing redirect: %d %s", r.Status, r.Raw)
	}
	for _, uri := range []string{
		"http://127.0.0.1:53123/cb?x=1", "http://127.0.0.1:53123/other", "http://127.0.0.2:53123/cb",
		"http://[::1]:53123/cb", "https://127.0.0.1:53123/cb", "http://localhost:53123/cb",
	} {
		q := c.AuthorizeQuery("")
		q.Set("redirect_uri", uri)
		if p := b.Get("/oauth/authorize?" + q.Encode()); p.Status != http.StatusBadRequest || p.Header.Get("Location") != "" {
			t.Errorf("%s: %d %q", uri, p.Status, p.Header.Get("Location"))
		}
	}
	// The rule the other way round: a client that registered localhost
	// cannot be sent to 127.0.0.1.
	l := e.Register("http://localhost/cb")
	q = l.AuthorizeQuery("")
	q.Set("redirect_uri", "http://localhost:8080/cb")
	b.Consent(q)
	q.Set("redirect_uri", "http://127.0.0.1:8080/cb")
	if p := b.Get("/oauth/authorize?" + q.Encode()); p.Status != http.StatusBadRequest {
		t.Errorf("localhost client sent to 127.0.0.1: %d", p.Status)
	}
}

// TestOA04PKCERequired: no challenge, plain, S512 or a malformed challenge
// get the error page whose link goes back to the registered URI as
// invalid_request with state and iss, and store nothing.
// Row BT-40 (docs/security-tests.md).
func TestOA04PKCERequired(t *testing.T) {
	t.Parallel()
	e, _ := servertest.NewOAuth(t)
	tn := e.NewTenant("o", "r")
	c := e.Register("https://client.example/cb")
	b := e.Browser(t)
	b.SignIn(tn.Principal)
	for name, mut := range map[string]func(url.Values){
		"no challenge":     func(q url.Values) { q.Del("code_challenge") },
		"no method":        func(q url.Values) { q.Del("code_challenge_method") },
		"plain":            func(q url.Values) { q.Set("code_challenge_method", "plain") },
		"S512":             func(q url.Values) { q.Set("code_challenge_method", "S512") },
		"short challenge":  func(q url.Values) { q.Set("code_challenge", "abc") },
		"padded challenge": func(q url.Values) { q.Set("code_challenge", q.Get("code_challenge")[:42]+"=") },
	} {
		q := c.AuthorizeQuery("")
		mut(q)
		link := errorLink(t, b.Get("/oauth/authorize?"+q.Encode()))
		if !strings.HasPrefix(link.String(), "https://client.example/cb?") ||
			link.Query().Get("error") != "invalid_request" || link.Query().Get("state") != "st-1" ||
			link.Query().Get("iss") != e.Cfg.PublicURL {
			t.Errorf("%s: link %q", name, link)
		}
	}
	if n := e.CountRows("oauth_requests") + e.CountRows("oauth_codes"); n != 0 {
		t.Errorf("%d rows stored for refused requests", n)
	}
}

// TestOA15RedirectsAfterValidation: a denial goes back to the registered
// URI with state and iss; a bad scope and a foreign resource get the error
// page with that link instead; every
// post-form redirect is 303; a tampered form cannot change the redirect.
// Row BT-40 (docs/security-tests.md).
func TestOA15RedirectsAfterValidation(t *testing.T) {
	t.Parallel()
	e, _ := servertest.NewOAuth(t)
	tn := e.NewTenant("o", "r")
	c := e.Register("https://client.example/cb")
	b := e.Browser(t)
	b.SignIn(tn.Principal)
	errorOf := func(p servertest.Page) (string, url.Values) {
		t.Helper()
		if p.Status != http.StatusSeeOther {
			t.Fatalf("want 303, got %d %s", p.Status, p.Body)
		}
		loc, _ := url.Parse(p.Header.Get("Location"))
		if loc.Scheme+"://"+loc.Host+loc.Path != c.Redirect {
			t.Fatalf("redirect to %q, not the registered URI", p.Header.Get("Location"))
		}
		return loc.Query().Get("error"), loc.Query()
	}
	// (a) deny
	f := servertest.Hidden(b.Consent(c.AuthorizeQuery("")).Body)
	f.Set("decision", "deny")
	if code, q := errorOf(b.Post("/oauth/authorize", f)); code != "access_denied" || q.Get("state") != "st-1" || q.Get("iss") != e.Cfg.PublicURL {
		t.Errorf("deny: %v", q)
	}
	// (b) a scope naming nothing known; a foreign resource: found before
	// the user acted, so a page with a link, not a redirect (BT-40).
	q := c.AuthorizeQuery("admin:all")
	if link := errorLink(t, b.Get("/oauth/authorize?"+q.Encode())); link.Query().Get("error") != "invalid_scope" {
		t.Errorf("bad scope: %s", link)
	}
	q = c.AuthorizeQuery("")
	q.Set("resource", "https://other.example/mcp")
	if link := errorLink(t, b.Get("/oauth/authorize?"+q.Encode())); link.Query().Get("error") != "invalid_target" {
		t.Errorf("foreign resource: %s", link)
	}
	// A trailing slash on our own resource is tolerated (docs/oauth.md).
	q.Set("resource", e.Cfg.PublicURL+"/mcp/")
	b.Consent(q)
	// (c) a redirect_uri smuggled into the consent form is refused, and
	// the honest answer still goes to the stored URI.
	p := b.Consent(c.AuthorizeQuery(""))
	f = servertest.Hidden(p.Body)
	f.Set("decision", "approve")
	f.Set("project", tn.Project)
	f.Set("scope", "memory:read")
	f.Set("redirect_uri", "https://evil.example/cb")
	if r := b.Post("/oauth/authorize", f); r.Status != http.StatusBadRequest || r.Header.Get("Location") != "" {
		t.Errorf("smuggled redirect_uri: %d %q", r.Status, r.Header.Get("Location"))
	}
	f.Del("redirect_uri")
	if code, q := errorOf(b.Post("/oauth/authorize", f)); code != "" || q.Get("code") == "" {
		t.Errorf("approve after refusal: %v", q)
	}
	// (d) sign-in is a 303 too.
	if p := e.Browser(t).SignIn(tn.Principal); p.Status != http.StatusSeeOther {
		t.Errorf("sign-in POST: %d", p.Status)
	}
}

// A state with a control character or invalid UTF-8 is refused with a 400
// page and nothing stored. Before, a NUL or invalid UTF-8 reached the
// database, which refused to store it, and the user got the 503 "cannot
// reach its database" page, with Retry-After, on every try. Printable text
// is kept (TestOA13TokenResponses returns one with é as sent).
func TestAuthorizeStateMustBePrintable(t *testing.T) {
	t.Parallel()
	e, _ := servertest.NewOAuth(t)
	tn := e.NewTenant("o", "r")
	c := e.Register("https://client.example/cb")
	b := e.Browser(t)
	b.SignIn(tn.Principal)
	for _, state := range []string{"a\x00b", "\xff\xfe", "tab\there", "del\x7f"} {
		q := c.AuthorizeQuery("")
		q.Set("state", state)
		if p := b.Get("/oauth/authorize?" + q.Encode()); p.Status != http.StatusBadRequest ||
			!strings.Contains(p.Body, "control character or is not valid UTF-8") {
			t.Errorf("state %q: %d %s", state, p.Status, p.Body)
		}
	}
	if n := e.CountRows("oauth_requests"); n != 0 {
		t.Errorf("%d requests stored for refused states", n)
	}
	q := c.AuthorizeQuery("")
	q.Set("state", `ok ~!"#$%&'()*+,-./:;<=>?@[\]^_{|} é`)
	if p := b.Get("/oauth/authorize?" + q.Encode()); p.Status != http.StatusOK {
		t.Errorf("a state of printable text: %d %s", p.Status, p.Body)
	}
}
