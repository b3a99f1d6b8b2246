package oauth

import (
	"net/url"
	"sort"
	"strings"
	"testing"
)

// FuzzRedirectURI checks the properties the authorization endpoint relies
// on, whatever the bytes: a validated URI has no fragment, no user info and
// only printable ASCII; matching never accepts a URI that fails validation;
// and a loopback match differs from its registration only in the port.
// Row OA-01 (docs/security-tests.md).
func FuzzRedirectURI(f *testing.F) {
	for _, s := range []string{
		"https://client.example/cb", "http://127.0.0.1/cb", "http://127.0.0.1:53123/cb",
		"http://[::1]:1/cb?x=1", "com.example.app:/cb", "javascript:alert(1)",
		"https://client.example@evil.com/cb", "http://localhost%25@evil.com/",
		"https://c.example/cb#f", "http://localhost:8080/callback",
	} {
		f.Add(s, "http://127.0.0.1:9/cb")
	}
	f.Fuzz(func(t *testing.T, registered, requested string) {
		if err := ValidateRedirectURI(requested); err == nil {
			if strings.ContainsAny(requested, "#\\ ") {
				t.Fatalf("validated %q with a fragment, backslash or space", requested)
			}
			u, perr := url.Parse(requested)
			if perr != nil {
				t.Fatalf("validated %q that net/url cannot parse: %v", requested, perr)
			}
			if u.User != nil {
				t.Fatalf("validated %q with user info", requested)
			}
			if u.Scheme == "http" && !isLoopbackHost(strings.ToLower(u.Hostname())) && !isLoopbackHost("["+u.Hostname()+"]") {
				t.Fatalf("validated non-loopback http URI %q (host %q)", requested, u.Hostname())
			}
		}
		if ValidateRedirectURI(registered) != nil {
			return
		}
		if !MatchRedirectURI([]string{registered}, requested) {
			return
		}
		if requested == registered {
			return
		}
		if ValidateRedirectURI(requested) != nil {
			t.Fatalf("matched %q, which fails validation", requested)
		}
		ru, _ := url.Parse(registered)
		qu, _ := url.Parse(requested)
		if ru.Scheme != "http" || qu.Scheme != "http" || ru.Hostname() != qu.Hostname() ||
			ru.EscapedPath() != qu.EscapedPath() || ru.RawQuery != qu.RawQuery {
			t.Fatalf("loopback match %q ~ %q differs in more than the port", registered, requested)
		}
	})
}

// FuzzParseForm: parsing never panics, and a parsed form re-encodes to
// something that parses back to the same form (no ambiguity).
func FuzzParseForm(f *testing.F) {
	for _, s := range []string{
		"grant_type=authorization_code&code=hyc_x&code_verifier=abc", "a=1&a=2", "a=%zz",
		"scope=memory%3Aread+documents%3Aread", "a;b", "&&=", "k=v&scope=a&scope=b",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		form, err := ParseForm(raw, "scope")
		if err != nil {
			if form != nil {
				t.Fatal("form != nil on error")
			}
			return
		}
		var keys []string
		for k, vs := range form {
			if k == "" {
				t.Fatal("empty key accepted")
			}
			if len(vs) > 1 && k != "scope" {
				t.Fatalf("repeated %q accepted", k)
			}
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var parts []string
		for _, k := range keys {
			for _, v := range form[k] {
				parts = append(parts, url.QueryEscape(k)+"="+url.QueryEscape(v))
			}
		}
		again, err := ParseForm(strings.Join(parts, "&"), "scope")
		if err != nil {
			t.Fatalf("re-encoded form does not parse: %v", err)
		}
		for _, k := range keys {
			if strings.Join(again[k], "\x00") != strings.Join(form[k], "\x00") {
				t.Fatalf("round trip changed %q", k)
			}
		}
	})
}
