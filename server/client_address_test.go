package server_test

// Topology rows (docs/security-tests.md, TP-01 to TP-03): the client
// address behind a trusted proxy, and that an attacker sharing an address
// with a real client cannot lock it out at the token endpoint.

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
	"heyaira/server"
	"heyaira/server/internal/servertest"
	"heyaira/server/internal/web"
)

// postTokenForm posts a form to /oauth/token with an optional
// X-Forwarded-For header and returns the status and the error code.
func postTokenForm(t *testing.T, e *servertest.Env, v url.Values, xff string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", e.Srv.URL+"/oauth/token", strings.NewReader(v.Encode()))
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
	return resp.StatusCode, servertest.Str(body, "error")
}

// Row TP-01: the review's lockout. From the address a real client also
// uses, 80 requests with made-up client ids are each refused
// invalid_client, with no lookup and nothing charged; the real client's
// refresh from the same address still succeeds. (Once they spent a bucket
// of the address, and the refresh got 429.)
func TestTP01MadeUpClientsCannotLockOutARealClient(t *testing.T) {
	t.Parallel()
	e, wc := servertest.NewCounted(t)
	tn := e.NewTenant("o", "r")
	c := e.Register("http://127.0.0.1/cb")
	rt := servertest.Str(e.Tokens(t, tn, c, "memory:read").Body, "refresh_token")
	codes := map[string]int{}
	n := statementsOf(wc, func() {
		for i := range 80 {
			id := "made-up-" + strconv.Itoa(i)
			if i%2 == 1 {
				id = madeUp(c.ID, oauth.PrefixClient)
			}
			_, code := postTokenForm(t, e, url.Values{"grant_type": {"refresh_token"}, "client_id": {id},
				"refresh_token": {madeUp(rt, oauth.PrefixRefresh)}}, "")
			codes[code]++
		}
	})
	if codes[oauth.ErrCodeInvalidClient] != 80 || n != 0 {
		t.Fatalf("80 made-up clients: %v, %d statements; want 80 × invalid_client and none", codes, n)
	}
	status, code := postTokenForm(t, e, url.Values{"grant_type": {"refresh_token"}, "client_id": {c.ID}, "refresh_token": {rt}}, "")
	if status != http.StatusOK {
		t.Fatalf("the real client's refresh after the attack: %d %s (attack: %v)", status, code, codes)
	}
}

// Row TP-02: behind a trusted proxy, the client address is the right-most
// untrusted X-Forwarded-For entry, whatever addresses a client puts to its
// left, and the access log names it; made-up refresh tokens naming a real
// client's id from behind the proxy are refused invalid_grant, and the real
// client, behind the same proxy, still refreshes.
func TestTP02TrustedProxyClientAddress(t *testing.T) {
	t.Parallel()
	e := servertest.New(t, func(c *server.Config) { c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")} })
	tn := e.NewTenant("o", "r")
	c := e.Register("http://127.0.0.1/cb")
	rt := servertest.Str(e.Tokens(t, tn, c, "memory:read").Body, "refresh_token")
	bad := url.Values{"grant_type": {"refresh_token"}, "client_id": {c.ID}}
	for i := range 20 {
		bad.Set("refresh_token", madeUp(rt, oauth.PrefixRefresh))
		if status, code := postTokenForm(t, e, bad, "10.9.9."+strconv.Itoa(i%250)+", 203.0.113.7"); code != oauth.ErrCodeInvalidGrant {
			t.Fatalf("a made-up refresh token behind the proxy: %d %s, want invalid_grant", status, code)
		}
	}
	status, code := postTokenForm(t, e, url.Values{"grant_type": {"refresh_token"}, "client_id": {c.ID}, "refresh_token": {rt}},
		"198.51.100.9")
	if status != http.StatusOK {
		t.Fatalf("the real client behind the same proxy: %d %s", status, code)
	}
	log := e.Logs.String()
	if !strings.Contains(log, `"client_addr":"203.0.113.7"`) || strings.Contains(log, `"client_addr":"10.9.9.`) {
		t.Error("the access log does not name the right-most untrusted address")
	}
}

// Row TP-03: the client-address rule, case by case.
func TestTP03ClientAddrRule(t *testing.T) {
	t.Parallel()
	trusted, err := web.ParseTrustedProxies(" 10.0.0.0/8, 192.0.2.1 ,fd00::/8")
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
		if got := web.ClientAddr(r, trusted); got != c.want {
			t.Errorf("peer %s, X-Forwarded-For %q: %s, want %s", c.peer, c.xff, got, c.want)
		}
	}
	for _, bad := range []string{"10.0.0.0/33", "example.com", "10.0.0.0/8;"} {
		if _, err := web.ParseTrustedProxies(bad); err == nil {
			t.Errorf("ParseTrustedProxies(%q) accepted", bad)
		}
	}
}
