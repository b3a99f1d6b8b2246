package authserver_test

import (
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"heyaira/server/internal/servertest"
)

var errorLinkRE = regexp.MustCompile(`<a href="([^"]*)" rel="noreferrer">`)

// errorLink checks that p is the authorization error page (a 400 with no
// Location) and returns the link back to the client it offers.
func errorLink(t *testing.T, p servertest.Page) *url.URL {
	t.Helper()
	if p.Status != http.StatusBadRequest || p.Header.Get("Location") != "" {
		t.Fatalf("want the 400 error page without Location, got %d Location=%q", p.Status, p.Header.Get("Location"))
	}
	m := errorLinkRE.FindStringSubmatch(p.Body)
	if m == nil {
		t.Fatalf("the error page offers no link back: %s", p.Body)
	}
	u, err := url.Parse(html.UnescapeString(m[1]))
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// TestBT40NoRedirectToAnUntrustedClient: anyone can register a client, so
// a deliberately broken authorization request for it, from a browser with
// no session and no click, must not send the browser to the client's URI
// (an open redirect, RFC 9700 §4.11.2). It gets a page that names the
// client and its redirect host and offers the error redirect as a link.
func TestBT40NoRedirectToAnUntrustedClient(t *testing.T) {
	t.Parallel()
	e, _ := servertest.NewOAuth(t)
	r := e.PostJSON("/oauth/register", map[string]any{"redirect_uris": []string{"https://phish.example/landing"},
		"client_name": "Totally Legit", "token_endpoint_auth_method": "none"})
	if r.Status != http.StatusCreated {
		t.Fatalf("register: %d %s", r.Status, r.Raw)
	}
	c := servertest.Client{ID: servertest.Str(r.Body, "client_id"), Redirect: "https://phish.example/landing", Verifier: servertest.RandomB64()}
	for name, mut := range map[string]func(url.Values){
		"no PKCE":           func(q url.Values) { q.Del("code_challenge") },
		"response_type":     func(q url.Values) { q.Set("response_type", "token") },
		"no response_type":  func(q url.Values) { q.Del("response_type") },
		"unknown scope":     func(q url.Values) { q.Set("scope", "nothing:known") },
		"foreign resource":  func(q url.Values) { q.Set("resource", "https://elsewhere.example/mcp") },
		"plain PKCE method": func(q url.Values) { q.Set("code_challenge_method", "plain") },
	} {
		q := c.AuthorizeQuery("")
		mut(q)
		p := e.Browser(t).Get("/oauth/authorize?" + q.Encode())
		link := errorLink(t, p)
		if link.Host != "phish.example" || link.Query().Get("error") == "" || link.Query().Get("state") != "st-1" {
			t.Errorf("%s: link %q", name, link)
		}
		for _, want := range []string{"Totally Legit", c.ID, "phish.example", "Nothing was granted"} {
			if !strings.Contains(p.Body, want) {
				t.Errorf("%s: the page does not show %q", name, want)
			}
		}
	}
	if n := e.CountRows("oauth_requests") + e.CountRows("oauth_codes"); n != 0 {
		t.Errorf("%d request/code rows after refusals", n)
	}
}
