package oauth

import (
	"errors"
	"strings"
	"testing"
)

// TestOA03ValidateRedirectURI is the registration allowlist.
func TestOA03ValidateRedirectURI(t *testing.T) {
	t.Parallel()
	tests := []struct {
		uri     string
		ok      bool
		dotless bool // refused only because a private-use scheme has no dot
	}{
		{"https://c.example/cb", true, false},
		{"com.example.app:/cb", true, false},
		{"com.example.app://cb/path", true, false},
		{"http://127.0.0.1/cb", true, false},
		{"http://127.0.0.1:53123/cb", true, false},
		{"http://[::1]:8080/cb", true, false},
		{"http://localhost:3000/callback", true, false},
		{"https://claude.ai/api/mcp/auth_callback", true, false},
		{"https://c.example:8443/cb?x=1", true, false},
		{"javascript:alert(1)", false, false},
		{"JaVaScRiPt:alert(1)", false, false},
		{" javascript:alert(1)", false, false},
		{"java\tscript:alert(1)", false, false},
		{"data:text/html,hi", false, false},
		{"file:///etc/passwd", false, false},
		{"vbscript:msgbox", false, false},
		{"http://evil.example/cb", false, false},
		{"http://127.0.0.2/cb", false, false},
		{"myapp:/cb", false, true},
		{"cursor://anysphere.cursor-mcp/oauth/callback", false, true},
		{"/cb", false, false},
		{"https://c.example/cb#x", false, false},
		{"https://c.example/cb#", false, false},
		{"https:///cb", false, false},
		{"https:c.example/cb", false, false},
		{"https://user@c.example/cb", false, false},
		{"https://c.example%2540evil.com/cb", false, false},
		{"http://localhost%25@evil.com/cb", false, false},
		{"https://c.example\\@evil.com/cb", false, false},
		{"https://c.example:0/cb", false, false},
		{"https://c.example:65536/cb", false, false},
		{"https://c.example:08/cb", false, false},
		{"https://c.exa_mple/cb", false, false},
		{"https://c.example/c b", false, false},
		{"https://c.example/\u00e9", false, false},
		{"HTTPS://c.example/cb", false, false},
		{"", false, false},
		{"https://c.example/" + strings.Repeat("a", 64<<10), false, false},
	}
	for _, tt := range tests {
		err := ValidateRedirectURI(tt.uri)
		if (err == nil) != tt.ok {
			t.Errorf("ValidateRedirectURI(%.60q) = %v, want ok=%v", tt.uri, err, tt.ok)
			continue
		}
		if err != nil && !errors.Is(err, ErrInvalidRedirectURI) {
			t.Errorf("ValidateRedirectURI(%.60q) = %v, not ErrInvalidRedirectURI", tt.uri, err)
		}
		if got := errors.Is(err, ErrDotlessScheme); got != tt.dotless {
			t.Errorf("ValidateRedirectURI(%.60q) dotless = %v, want %v", tt.uri, got, tt.dotless)
		}
	}
}

// TestOA01NearMissRedirects: every near miss of a registered https URI is
// refused; comparison is simple string comparison (RFC 3986 §6.2.1).
func TestOA01NearMissRedirects(t *testing.T) {
	t.Parallel()
	reg := []string{"https://client.example/cb"}
	for _, uri := range []string{
		"https://client.example/cb/",
		"https://client.example/CB",
		"https://CLIENT.example/cb",
		"https://client.example/cb?x=1",
		"https://client.example/cb#f",
		"https://client.example/cb/../cb",
		"https://client.example/c%62",
		"https://client.example.evil.com/cb",
		"https://client.example@evil.com/cb",
		"https://client.example%2540evil.com/cb",
		"https://evil.com/?https://client.example/cb",
		"https://client.example:443/cb",
		"http://client.example/cb",
		"",
	} {
		if MatchRedirectURI(reg, uri) {
			t.Errorf("MatchRedirectURI(%q) = true, want false", uri)
		}
	}
	if !MatchRedirectURI(reg, "https://client.example/cb") {
		t.Error("exact registered URI refused")
	}
}

// TestOA02LoopbackAnyPort: only the port of an http loopback URI may
// differ. localhost and 127.0.0.1 are different hosts, in both directions.
func TestOA02LoopbackAnyPort(t *testing.T) {
	t.Parallel()
	tests := []struct {
		registered, requested string
		ok                    bool
	}{
		{"http://127.0.0.1/cb", "http://127.0.0.1:53123/cb", true},
		{"http://127.0.0.1:33418/", "http://127.0.0.1:5000/", true},
		{"http://127.0.0.1:33418/cb", "http://127.0.0.1/cb", true},
		{"http://[::1]/cb", "http://[::1]:53123/cb", true},
		{"http://localhost/cb", "http://localhost:53123/cb", true},
		{"http://127.0.0.1/cb?a=1", "http://127.0.0.1:9/cb?a=1", true},
		{"http://127.0.0.1/cb", "http://127.0.0.1:53123/cb?x=1", false},
		{"http://127.0.0.1/cb", "http://127.0.0.1:53123/other", false},
		{"http://127.0.0.1/cb", "http://127.0.0.2:53123/cb", false},
		{"http://127.0.0.1/cb", "http://[::1]:53123/cb", false},
		{"http://127.0.0.1/cb", "https://127.0.0.1:53123/cb", false},
		{"http://127.0.0.1/cb", "http://127.0.0.1:53123/cb/", false},
		{"http://127.0.0.1/cb", "http://127.0.0.1:53123/cb#x", false},
		{"http://127.0.0.1/cb", "http://127.0.0.1:0/cb", false},
		{"http://127.0.0.1/cb", "http://127.0.0.1:/cb", false},
		{"http://127.0.0.1/cb", "http://user@127.0.0.1:5/cb", false},
		// The documented rule: localhost ≠ 127.0.0.1, in both directions.
		{"http://127.0.0.1/cb", "http://localhost:53123/cb", false},
		{"http://localhost/cb", "http://127.0.0.1:53123/cb", false},
		// Ports are never ignored for https or private-use schemes.
		{"https://127.0.0.1/cb", "https://127.0.0.1:53123/cb", false},
	}
	for _, tt := range tests {
		if got := MatchRedirectURI([]string{tt.registered}, tt.requested); got != tt.ok {
			t.Errorf("MatchRedirectURI([%q], %q) = %v, want %v", tt.registered, tt.requested, got, tt.ok)
		}
	}
}

func TestRedirectHost(t *testing.T) {
	t.Parallel()
	for uri, want := range map[string]string{
		"https://claude.ai/api/mcp/auth_callback": "claude.ai",
		"http://127.0.0.1:5000/cb":                "127.0.0.1:5000",
		"com.example.app:/cb":                     "com.example.app:",
	} {
		if got := RedirectHost(uri); got != want {
			t.Errorf("RedirectHost(%q) = %q, want %q", uri, got, want)
		}
	}
	if !IsLoopbackRedirect("http://[::1]:1/x") || IsLoopbackRedirect("https://localhost/x") {
		t.Error("IsLoopbackRedirect misclassifies")
	}
}
