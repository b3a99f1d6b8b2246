package systemtest

import (
	"net/http"
	"os"
	"strings"
	"testing"
)

// Row AZ-15: HEYAIRA_ALLOWED_ORIGINS is an Origin check on POST /mcp, not
// CORS. Through nginx: a request without Origin, or with the public URL's
// or a listed origin, is served; another origin gets 403 before
// authentication. No answer grants a browser anything: the preflight
// (OPTIONS /mcp) is not answered with any Access-Control-* header, nor is a
// served request. README's row says so, and no longer promises browsers.
func TestAZ15AllowedOriginsIsNotCORS(t *testing.T) {
	const listed = "https://tools.example"
	tp := newTopology(t, map[string]string{"HEYAIRA_ALLOWED_ORIGINS": listed})
	c := tp.client("127.0.0.24")
	call := func(origin string) answer {
		h := []string{"Content-Type", "application/json", "Accept", "application/json, text/event-stream",
			"Authorization", "Bearer " + tp.access}
		if origin != "" {
			h = append(h, "Origin", origin)
		}
		return send(t, c, "POST", "/mcp", mcpCall(t), h...)
	}
	noCORS := func(what string, a answer) {
		t.Helper()
		for k := range a.header {
			if strings.HasPrefix(strings.ToLower(k), "access-control-") {
				t.Errorf("%s: answered with %s: %q", what, k, a.header.Get(k))
			}
		}
	}
	for _, origin := range []string{"", tp.public, listed} {
		a := call(origin)
		if a.status != http.StatusOK || strings.Contains(a.body, `"isError":true`) {
			t.Errorf("tools/call with Origin %q: %d %.200s", origin, a.status, a.body)
		}
		noCORS("tools/call with Origin "+origin, a)
	}
	if a := call("https://evil.example"); a.status != http.StatusForbidden || !strings.Contains(a.body, "origin not allowed") {
		t.Errorf("tools/call with a foreign Origin: %d %.200s, want 403 origin not allowed", a.status, a.body)
	}
	pre := send(t, c, "OPTIONS", "/mcp", "", "Origin", listed, "Access-Control-Request-Method", "POST",
		"Access-Control-Request-Headers", "authorization, content-type")
	if pre.status >= 200 && pre.status < 300 {
		t.Errorf("OPTIONS /mcp preflight: %d, want a refusal", pre.status)
	}
	noCORS("OPTIONS /mcp preflight", pre)

	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	var row string
	for _, line := range strings.Split(string(readme), "\n") {
		if strings.HasPrefix(line, "| `HEYAIRA_ALLOWED_ORIGINS` |") {
			row = line
		}
	}
	if row == "" {
		t.Fatal("README has no HEYAIRA_ALLOWED_ORIGINS row")
	}
	if strings.Contains(strings.ToLower(row), "browser origins allowed") || !strings.Contains(row, "CORS") {
		t.Errorf("README's HEYAIRA_ALLOWED_ORIGINS row must describe the Origin check and say there is no CORS: %s", row)
	}
}
