package systemtest

import (
	"crypto/tls"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// hstsValue is the Strict-Transport-Security value deploy/nginx-heyaira.conf
// sends: one year, without includeSubDomains (docs/deploy.md says why).
const hstsValue = "max-age=31536000"

// answer is one response through nginx: status, headers and body.
type answer struct {
	status int
	header http.Header
	body   string
}

// send makes one request with c and returns the whole answer.
func send(t *testing.T, c *loadClient, method, path, body string, header ...string) answer {
	t.Helper()
	req, _ := http.NewRequest(method, c.base+path, strings.NewReader(body))
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, resp.Header, string(raw)}
}

// byNginx429 reports whether a is nginx's own 429 page, not an answer of a
// replica (the server's 429s are JSON).
func (a answer) byNginx429() bool {
	return a.status == http.StatusTooManyRequests && strings.Contains(a.body, "<center>nginx")
}

// siteLimit reads a number from the shipped site configuration, so the test
// follows the file's figures. Without it the test fails, and goes on with
// fallback to show what nginx then does.
func siteLimit(t *testing.T, pattern string, fallback int) int {
	t.Helper()
	site, err := os.ReadFile("deploy/nginx-heyaira.conf")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(pattern).FindSubmatch(site)
	if m == nil {
		t.Errorf("deploy/nginx-heyaira.conf has no %s", pattern)
		return fallback
	}
	n, _ := strconv.Atoi(string(m[1]))
	return n
}

// mcpCall is a tools/call body for memory_list, which succeeds on any project.
func mcpCall(t *testing.T) string {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
		"params": map[string]any{"name": "memory_list", "arguments": map[string]any{}}})
	return string(b)
}

// Row TP-11: the shipped nginx configuration's hardening, run by Debian's
// nginx in front of two replicas. Strict-Transport-Security on every answer
// over TLS (a replica's 200, 400 and 401, and nginx's own 429), without
// includeSubDomains. A flood from one address on /oauth/ is answered 429 by
// nginx after the configured burst, never before (the first burst+1 pass,
// whatever the speed); meanwhile the same address's /mcp calls (another
// zone) and another address's /oauth/ requests are served, and the flooding
// address is served again once the bucket has leaked. limit_conn on /oauth/:
// with limit−1 requests held open (headers sent, body not), one more is
// served; with limit held open the next gets nginx's 429; closed, served again.
func TestTP11NginxHSTSAndLimits(t *testing.T) {
	tp := newTopology(t, nil)
	burst := siteLimit(t, `location /oauth/ \{[^}]*limit_req\s+zone=heyaira_oauth burst=(\d+) nodelay;`, 200)
	connLimit := siteLimit(t, `location /oauth/ \{[^}]*limit_conn\s+heyaira_oauth_conn (\d+);`, 20)
	mcp := func(c *loadClient) answer {
		return send(t, c, "POST", "/mcp", mcpCall(t), "Content-Type", "application/json",
			"Accept", "application/json, text/event-stream", "Authorization", "Bearer "+tp.access)
	}
	hsts := func(what string, a answer) {
		t.Helper()
		if got := a.header.Values("Strict-Transport-Security"); len(got) != 1 || got[0] != hstsValue {
			t.Errorf("%s (HTTP %d): Strict-Transport-Security %q, want exactly %q", what, a.status, got, hstsValue)
		}
	}

	t.Run("HSTS on every answer over TLS", func(t *testing.T) {
		c := tp.client("127.0.0.20")
		if a := send(t, c, "GET", "/healthz", ""); a.status != http.StatusOK {
			t.Errorf("GET /healthz: %d", a.status)
		} else {
			hsts("GET /healthz", a)
		}
		if a := mcp(c); a.status != http.StatusOK {
			t.Errorf("tools/call: %d %.200s", a.status, a.body)
		} else {
			hsts("tools/call", a)
		}
		a := send(t, c, "POST", "/mcp", mcpCall(t), "Content-Type", "application/json", "Accept", "application/json, text/event-stream")
		if a.status != http.StatusUnauthorized {
			t.Errorf("POST /mcp without a token: %d", a.status)
		}
		hsts("POST /mcp without a token", a)
		a = send(t, c, "GET", "/oauth/authorize", "")
		if a.status != http.StatusBadRequest {
			t.Errorf("GET /oauth/authorize without parameters: %d", a.status)
		}
		hsts("GET /oauth/authorize without parameters", a)
	})

	t.Run("flood on /oauth/ gets nginx's 429", func(t *testing.T) {
		flooder := tp.client("127.0.0.21")
		first := -1
		for i := range burst + 400 {
			a := send(t, flooder, "GET", "/oauth/authorize", "")
			if a.status == http.StatusTooManyRequests {
				if !a.byNginx429() {
					t.Fatalf("request %d: a 429 that is not nginx's: %.200s", i, a.body)
				}
				hsts("nginx's 429", a)
				first = i
				break
			}
			if a.status != http.StatusBadRequest {
				t.Fatalf("request %d: HTTP %d %.200s, want the server's 400 or nginx's 429", i, a.status, a.body)
			}
		}
		// nginx lets burst+1 requests through from an empty bucket, however
		// fast they come; a slower client only gets more.
		if first < 0 {
			t.Fatalf("%d requests back to back from one address: no 429 (burst %d)", burst+400, burst)
		}
		if first < burst+1 {
			t.Fatalf("nginx refused request %d, within the burst of %d", first, burst)
		}
		t.Logf("TP-11 flood: first 429 at request %d (burst %d)", first, burst)
		if a := mcp(flooder); a.status != http.StatusOK || strings.Contains(a.body, `"isError":true`) {
			t.Errorf("the flooding address's tool call (another zone): %d %.200s", a.status, a.body)
		}
		if a := send(t, tp.client("127.0.0.23"), "GET", "/oauth/authorize", ""); a.status != http.StatusBadRequest {
			t.Errorf("another address on /oauth/ during the flood: %d %.200s", a.status, a.body)
		}
		// The bucket leaks 10 a second; after half a second at least one
		// more request fits. Waiting longer only leaks more.
		time.Sleep(500 * time.Millisecond)
		if a := send(t, flooder, "GET", "/oauth/authorize", ""); a.status != http.StatusBadRequest {
			t.Errorf("the flooding address on /oauth/ after 500 ms: %d %.200s", a.status, a.body)
		}
	})

	t.Run("limit_conn on /oauth/", func(t *testing.T) {
		// Every request of this subtest comes from an address of its own, and
		// their number stays below burst+1, so no 429 here is limit_req's.
		const ip = "127.0.0.22"
		requests := 0
		probe := tp.client(ip)
		served := func() bool {
			requests++
			a := send(t, probe, "GET", "/oauth/authorize", "")
			if a.status == http.StatusTooManyRequests && a.byNginx429() {
				return false
			}
			if a.status != http.StatusBadRequest {
				t.Fatalf("probe: HTTP %d %.200s", a.status, a.body)
			}
			return true
		}
		var held []net.Conn
		hold := func() {
			d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
			conn, err := tls.DialWithDialer(d, "tcp", tp.public[len("https://"):], &tls.Config{RootCAs: tp.ca})
			if err != nil {
				t.Fatal(err)
			}
			held = append(held, conn)
			requests++
			// The whole header, and none of the promised body: nginx counts
			// the request from its header on, and waits for the body.
			if _, err := io.WriteString(conn, "POST /oauth/token HTTP/1.1\r\nHost: "+tp.public[len("https://"):]+
				"\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\n"); err != nil {
				t.Fatal(err)
			}
		}
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for range connLimit - 1 {
			hold()
		}
		// At most connLimit requests in progress, whatever nginx has read.
		if !served() {
			t.Fatalf("with %d requests held open, the next was refused (limit %d)", connLimit-1, connLimit)
		}
		hold()
		// Now connLimit are held: once nginx has read the last header, a
		// probe is refused. Polled, 50 ms apart, at most 60 times.
		refused := false
		for range 60 {
			if !served() {
				refused = true
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		if !refused {
			t.Fatalf("with %d requests held open (limit %d), probes were still served", connLimit, connLimit)
		}
		for _, c := range held {
			c.Close()
		}
		held = nil
		back := false
		for range 60 {
			if served() {
				back = true
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		if !back {
			t.Errorf("the held connections closed, probes still refused")
		}
		if requests > burst {
			t.Fatalf("the subtest sent %d requests, over the limit_req burst %d: its 429s may be limit_req's", requests, burst)
		}
	})
}
