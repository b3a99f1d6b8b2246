package server

// Topology rows (docs/security-tests.md, TP-01 to TP-03): the client
// address behind a trusted proxy, and the token-endpoint failure throttle
// keyed on that address and the client, so that an attacker sharing an
// address with a real client cannot lock it out.

import (
	"encoding/json"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"heyaira/oauth"
)

// postTokenForm posts a form to /oauth/token with an optional
// X-Forwarded-For header and returns the status and the error code.
func postTokenForm(t *testing.T, e *testEnv, v url.Values, xff string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", e.srv.URL+"/oauth/token", strings.NewReader(v.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if xff != "" {
		req.Header.Set("X-Forwarded-For", xff)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var body map[string]any
	json.Unmarshal(raw, &body)
	return resp.StatusCode, str(body, "error")
}

// Row TP-01: the review's lockout. From the address a real client also
// uses, 80 refused requests with made-up client ids end in 429; the real
// client's refresh from the same address still succeeds, because made-up
// clients share a bucket of their own. Before the fix the bucket was the
// address alone and the refresh got 429.
func TestTP01MadeUpClientsCannotLockOutARealClient(t *testing.T) {
	t.Parallel()
	e, _ := newOAuthEnv(t)
	tn := e.newTenant("o", "r")
	c := e.register("http://127.0.0.1/cb")
	rt := str(e.tokens(t, tn, c, "memory:read").body, "refresh_token")
	codes := map[string]int{}
	for i := range refusalBurst + 20 {
		_, code := postTokenForm(t, e, url.Values{"grant_type": {"refresh_token"}, "client_id": {"made-up-" + strconv.Itoa(i)},
			"refresh_token": {oauth.NewSecret(oauth.PrefixRefresh)}}, "")
		codes[code]++
	}
	if codes["temporarily_unavailable"] == 0 {
		t.Fatalf("the made-up clients were never throttled: %v", codes)
	}
	status, code := postTokenForm(t, e, url.Values{"grant_type": {"refresh_token"}, "client_id": {c.id}, "refresh_token": {rt}}, "")
	if status != http.StatusOK {
		t.Fatalf("the real client's refresh after the attack: %d %s (attack: %v)", status, code, codes)
	}
}

// Row TP-02: behind a trusted proxy, an attacker replaying a real client's
// id with bad refresh tokens is throttled at its own address (the right-most
// untrusted X-Forwarded-For entry), and cannot escape by putting addresses
// of its choosing to the left; the real client, behind the same proxy, still
// refreshes. Without trusted proxies the header is ignored, so rotating it
// does not escape the throttle either.
func TestTP02TrustedProxyClientAddress(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, func(c *Config) { c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")} })
	tn := e.newTenant("o", "r")
	c := e.register("http://127.0.0.1/cb")
	rt := str(e.tokens(t, tn, c, "memory:read").body, "refresh_token")
	bad := url.Values{"grant_type": {"refresh_token"}, "client_id": {c.id}}
	last := 0
	for i := range refusalBurst + 10 {
		bad.Set("refresh_token", oauth.NewSecret(oauth.PrefixRefresh))
		last, _ = postTokenForm(t, e, bad, "10.9.9."+strconv.Itoa(i%250)+", 203.0.113.7")
	}
	if last != http.StatusTooManyRequests {
		t.Fatalf("the attacker behind the proxy was not throttled: last status %d", last)
	}
	status, code := postTokenForm(t, e, url.Values{"grant_type": {"refresh_token"}, "client_id": {c.id}, "refresh_token": {rt}},
		"198.51.100.9")
	if status != http.StatusOK {
		t.Fatalf("the real client behind the same proxy: %d %s", status, code)
	}
	if !strings.Contains(e.logs.String(), `"client_addr":"203.0.113.7"`) {
		t.Error("the access log does not name the client address")
	}

	plain, _ := newOAuthEnv(t)
	pc := plain.register("http://127.0.0.1/cb")
	bad.Set("client_id", pc.id)
	for i := range refusalBurst + 10 {
		bad.Set("refresh_token", oauth.NewSecret(oauth.PrefixRefresh))
		last, _ = postTokenForm(t, plain, bad, "203.0.113."+strconv.Itoa(i%250))
	}
	if last != http.StatusTooManyRequests {
		t.Fatalf("with no trusted proxy, a rotated X-Forwarded-For escaped the throttle: last status %d", last)
	}
}

// Row TP-03: the client-address rule, case by case.
func TestTP03ClientAddrRule(t *testing.T) {
	t.Parallel()
	trusted, err := ParseTrustedProxies(" 10.0.0.0/8, 192.0.2.1 ,fd00::/8")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		peer string
		xff  []string
		want string
	}{
		{"203.0.113.5:1", []string{"198.51.100.1"}, "203.0.113.5"},                  // untrusted peer: header ignored
		{"10.1.2.3:1", nil, "10.1.2.3"},                                             // trusted, no header
		{"10.1.2.3:1", []string{"198.51.100.1"}, "198.51.100.1"},                    // one hop
		{"10.1.2.3:1", []string{"1.1.1.1, 198.51.100.1, 10.0.0.9"}, "198.51.100.1"}, // spoofed left entry ignored
		{"10.1.2.3:1", []string{"1.1.1.1", "198.51.100.1"}, "198.51.100.1"},         // two header lines
		{"192.0.2.1:1", []string{"10.0.0.1, 192.0.2.1"}, "10.0.0.1"},                // all trusted: left-most
		{"10.1.2.3:1", []string{"1.1.1.1, not-an-ip, 10.0.0.9"}, "10.0.0.9"},        // garbage hop: last vouched
		{"[fd00::1]:1", []string{"::ffff:198.51.100.2"}, "198.51.100.2"},            // IPv6 proxy, mapped client
	}
	for _, c := range cases {
		r, _ := http.NewRequest("GET", "/", nil)
		r.RemoteAddr = c.peer
		for _, h := range c.xff {
			r.Header.Add("X-Forwarded-For", h)
		}
		if got := clientAddr(r, trusted); got != c.want {
			t.Errorf("peer %s, X-Forwarded-For %q: %s, want %s", c.peer, c.xff, got, c.want)
		}
	}
	for _, bad := range []string{"10.0.0.0/33", "example.com", "10.0.0.0/8;"} {
		if _, err := ParseTrustedProxies(bad); err == nil {
			t.Errorf("ParseTrustedProxies(%q) accepted", bad)
		}
	}
}
