package authserver_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"heyaira/server"
	"heyaira/server/authserver"
	"heyaira/server/internal/servertest"
)

// todayMetadata is the authorization-server metadata as served before
// CIMD existed, byte for byte, for issuer https://heyaira.example.
const todayMetadata = `{"issuer":"https://heyaira.example","authorization_endpoint":"https://heyaira.example/oauth/authorize",` +
	`"token_endpoint":"https://heyaira.example/oauth/token","registration_endpoint":"https://heyaira.example/oauth/register",` +
	`"revocation_endpoint":"https://heyaira.example/oauth/revoke","scopes_supported":["memory:read","memory:write",` +
	`"tasks:read","tasks:write","documents:read","workflows:read","workflows:write"],"response_types_supported":["code"],` +
	`"response_modes_supported":["query"],"grant_types_supported":["authorization_code","refresh_token"],` +
	`"token_endpoint_auth_methods_supported":["none"],"revocation_endpoint_auth_methods_supported":["none"],` +
	`"code_challenge_methods_supported":["S256"],"authorization_response_iss_parameter_supported":true,` +
	`"client_id_metadata_document_supported":false}`

// TestCIMDMetadata: with HEYAIRA_CIMD_CLIENTS unset the metadata is byte
// for byte what it was; with a listed URL it advertises CIMD, and "none" stays among
// the token endpoint's methods (Claude and Codex need both), and DCR stays.
// Row CM-10 (docs/security-tests.md).
func TestCIMDMetadata(t *testing.T) {
	t.Parallel()
	s := servertest.NewCIMDStandIn(t)
	for _, tc := range []struct {
		name string
		cimd *authserver.CIMD
		want string
	}{
		{"off", nil, todayMetadata},
		{"on", s.Resolver(t, authserver.CIMDFetchTimeout, "https://claude.ai/oauth/claude-code-client-metadata"),
			strings.Replace(todayMetadata, `"client_id_metadata_document_supported":false`, `"client_id_metadata_document_supported":true`, 1)},
	} {
		e := servertest.New(t, func(c *server.Config) { c.PublicURL = "https://heyaira.example"; c.CIMD = tc.cimd })
		resp, err := http.Get(e.Srv.URL + "/.well-known/oauth-authorization-server")
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(got) != tc.want {
			t.Errorf("%s: metadata =\n%s\nwant\n%s", tc.name, got, tc.want)
		}
	}
	if n := s.TotalFetches(); n != 0 {
		t.Errorf("serving metadata fetched %d documents", n)
	}
}

// TestCIMDOffURLIsUnknownClient: with CIMD off, a URL client_id is an
// unregistered client, as before, and nothing is fetched.
// Row CM-10 (docs/security-tests.md).
func TestCIMDOffURLIsUnknownClient(t *testing.T) {
	t.Parallel()
	e := servertest.New(t)
	c := servertest.CIMDClient("https://claude.ai/oauth/claude-code-client-metadata", "http://127.0.0.1:5000/callback")
	p := e.Browser(t).Get("/oauth/authorize?" + c.AuthorizeQuery("memory:read").Encode())
	if p.Status != http.StatusBadRequest || p.Header.Get("Location") != "" ||
		!strings.Contains(p.Body, "not registered with this server") {
		t.Fatalf("CIMD off: %d %q %s", p.Status, p.Header.Get("Location"), p.Body)
	}
}

// TestCIMDSnapshotsAccepted runs the whole flow for each published
// document: consent page (host as identity, name self-asserted, the
// loopback-only warning only where every URI is loopback), approval, code
// exchange and refresh with the URL as client_id, and a tool call.
// Row CM-13 (docs/security-tests.md).
func TestCIMDSnapshotsAccepted(t *testing.T) {
	t.Parallel()
	e, s := servertest.NewCIMDEnv(t, "https://claude.ai/oauth/claude-code-client-metadata", "https://claude.ai/oauth/mcp-oauth-client-metadata",
		"https://vscode.dev/oauth/client-metadata.json", "https://chatgpt.com/oauth/codex/client.json")
	tn := e.NewTenant("o", "r")
	for _, tc := range []struct {
		url, redirect, host, name string
		allLoopback               bool
	}{
		// Claude Code lists port-less loopback URIs and uses an ephemeral port.
		{"https://claude.ai/oauth/claude-code-client-metadata", "http://127.0.0.1:53682/callback", "claude.ai", "Claude Code", true},
		{"https://claude.ai/oauth/mcp-oauth-client-metadata", "https://claude.ai/api/mcp/auth_callback", "claude.ai", "Claude", false},
		{"https://vscode.dev/oauth/client-metadata.json", "http://127.0.0.1:33418/", "vscode.dev", "Visual Studio Code", false},
		{"https://chatgpt.com/oauth/codex/client.json", "http://localhost:41234/callback", "chatgpt.com", "Codex", true},
	} {
		c := servertest.CIMDClient(tc.url, tc.redirect)
		b := e.Browser(t)
		b.SignIn(tn.Principal)
		page := b.Consent(c.AuthorizeQuery("memory:read"))
		for _, want := range []string{"<strong>" + tc.host + "</strong>: that host is who this application is",
			"self-asserted", "<bdi>" + tc.name + "</bdi>"} {
			if !strings.Contains(page.Body, want) {
				t.Errorf("%s: the consent page lacks %q", tc.url, want)
			}
		}
		if got := strings.Contains(page.Body, "lists only addresses on your own computer"); got != tc.allLoopback {
			t.Errorf("%s: loopback-only warning shown = %v, want %v", tc.url, got, tc.allLoopback)
		}
		r := e.Exchange(c, servertest.CodeFrom(t, b.Approve(page, tn.Project, "memory:read")))
		if r.Status != http.StatusOK {
			t.Fatalf("%s: exchange %d %s", tc.url, r.Status, r.Raw)
		}
		if st := e.MCPStatus(servertest.Str(r.Body, "access_token")); st != http.StatusOK {
			t.Errorf("%s: tools/list with the token: %d", tc.url, st)
		}
		if rr := e.Refresh(c, servertest.Str(r.Body, "refresh_token")); rr.Status != http.StatusOK {
			t.Errorf("%s: refresh %d %s", tc.url, rr.Status, rr.Raw)
		}
		if n := s.Fetches(tc.url); n != 1 {
			t.Errorf("%s fetched %d times, want 1", tc.url, n)
		}
	}
}

// TestCIMDSecondDeviceKeepsFirst: every installation of Claude Code shares
// one client_id. A second device's authorization by the same principal for
// the same project extends the one grant and revokes nothing: the first
// device's tokens keep working. The document is fetched once, and one
// client row serves both.
// Row CM-12 (docs/security-tests.md).
func TestCIMDSecondDeviceKeepsFirst(t *testing.T) {
	t.Parallel()
	e, s := servertest.NewCIMDEnv(t, "https://claude.ai/oauth/claude-code-client-metadata")
	tn := e.NewTenant("o", "r")
	url := "https://claude.ai/oauth/claude-code-client-metadata"
	first := e.Tokens(t, tn, servertest.CIMDClient(url, "http://127.0.0.1:50001/callback"), "memory:read")
	second := e.Tokens(t, tn, servertest.CIMDClient(url, "http://localhost:50002/callback"), "memory:read", "tasks:read")
	if st := e.MCPStatus(servertest.Str(first.Body, "access_token")); st != http.StatusOK {
		t.Errorf("the first device's access token after the second's authorization: %d", st)
	}
	if r := e.Refresh(servertest.CIMDClient(url, ""), servertest.Str(first.Body, "refresh_token")); r.Status != http.StatusOK {
		t.Errorf("the first device's refresh after the second's authorization: %d %s", r.Status, r.Raw)
	}
	if st := e.MCPStatus(servertest.Str(second.Body, "access_token")); st != http.StatusOK {
		t.Errorf("the second device's access token: %d", st)
	}
	if n := e.QueryString(`SELECT count(*)::text FROM oauth_clients WHERE metadata_url = $1`, url); n != "1" {
		t.Errorf("%s client rows for one document URL", n)
	}
	if n := e.QueryString(`SELECT count(*)::text FROM oauth_grants g JOIN oauth_clients c ON c.id = g.client_id
		WHERE c.metadata_url = $1 AND g.revoked_at IS NULL`, url); n != "1" {
		t.Errorf("%s active grants, want the one per (client, principal, project)", n)
	}
	if n := s.Fetches(url); n != 1 {
		t.Errorf("fetched %d times, want 1 (the row is the cache)", n)
	}
}

// TestCIMDRedirectMustBeListed: a redirect URI the document does not list
// is refused with a page, never a redirect; loopback matching ignores the
// port only.
// Row CM-11 (docs/security-tests.md).
func TestCIMDRedirectMustBeListed(t *testing.T) {
	t.Parallel()
	e, _ := servertest.NewCIMDEnv(t, "https://claude.ai/oauth/claude-code-client-metadata")
	url := "https://claude.ai/oauth/claude-code-client-metadata"
	for _, redirect := range []string{"http://127.0.0.1:5000/other", "https://evil.example/callback",
		"http://127.0.0.1.evil.example/callback"} {
		p := e.Browser(t).Get("/oauth/authorize?" + servertest.CIMDClient(url, redirect).AuthorizeQuery("memory:read").Encode())
		if p.Status != http.StatusBadRequest || p.Header.Get("Location") != "" {
			t.Errorf("redirect %s: %d %q", redirect, p.Status, p.Header.Get("Location"))
		}
	}
}

// TestCIMDCacheControl: the row is used until its max-age runs out, and
// fetched again after.
func TestCIMDCacheControl(t *testing.T) {
	t.Parallel()
	s := servertest.NewCIMDStandIn(t)
	clock := servertest.NewClock()
	cimd := s.Resolver(t, authserver.CIMDFetchTimeout, "https://docs.example/client.json")
	e := servertest.New(t, func(c *server.Config) { c.CIMD = cimd; c.Now = clock.Now })
	url := "https://docs.example/client.json"
	s.ServeJSON(url, []byte(`{"client_id":"`+url+`","client_name":"Docs","redirect_uris":["https://docs.example/cb"]}`),
		"Cache-Control", "public, max-age=300")
	get := func() servertest.Page {
		return e.Browser(t).Get("/oauth/authorize?" + servertest.CIMDClient(url, "https://docs.example/cb").AuthorizeQuery("memory:read").Encode())
	}
	for i, step := range []struct {
		advance time.Duration
		fetches int
	}{{0, 1}, {4 * time.Minute, 1}, {2 * time.Minute, 2}} {
		clock.Advance(step.advance)
		if p := get(); p.Status != http.StatusSeeOther || p.Header.Get("Location") != "/signin" {
			t.Fatalf("step %d: %d %s", i, p.Status, p.Body)
		}
		if n := s.Fetches(url); n != step.fetches {
			t.Errorf("step %d: %d fetches, want %d", i, n, step.fetches)
		}
	}
}
