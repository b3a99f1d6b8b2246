package authserver_test

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"heyaira/oauth"
	"heyaira/server/internal/servertest"
)

// TestCR02SecretsStoredOnlyHashed runs the whole flow, collects every secret
// a browser or client ever sees (sign-in link, CSRF cookie and field, session
// cookie, request handle, consent CSRF, code, access and refresh tokens),
// checks their entropy, then dumps every table and the server's log and
// finds none of them, in the clear or base64-decoded.
// Row LG-01 (docs/security-tests.md).
func TestCR02SecretsStoredOnlyHashed(t *testing.T) {
	t.Parallel()
	e, _ := servertest.NewOAuth(t)
	tn := e.NewTenant("o", "r")
	c := e.Register("http://127.0.0.1/cb")
	secrets := map[string]string{}

	b := e.Browser(t)
	link := e.SigninLink(tn.Principal)
	secrets["signin link"] = link
	q := c.AuthorizeQuery("")
	b.Get("/oauth/authorize?" + q.Encode()) // pending cookie, then sign-in
	sp := b.Get("/signin?token=" + link)
	secrets["signin csrf field"] = servertest.Hidden(sp.Body).Get("csrf")
	secrets["signin csrf cookie"] = servertest.ReadJarCookie(b, e, "heyaira_signin_csrf")
	next := b.Post("/signin", servertest.Hidden(sp.Body)).Header.Get("Location")
	secrets["session cookie"] = servertest.ReadJarCookie(b, e, "heyaira_session")
	consent := b.Get(next)
	secrets["request handle"] = servertest.Hidden(consent.Body).Get("request")
	secrets["consent csrf"] = servertest.Hidden(consent.Body).Get("csrf")
	code := servertest.CodeFrom(t, b.Approve(consent, tn.Project, "memory:read", "documents:read"))
	secrets["code"] = code
	tk := e.Exchange(c, code)
	secrets["access token"] = servertest.Str(tk.Body, "access_token")
	secrets["refresh token"] = servertest.Str(tk.Body, "refresh_token")
	rt := e.Refresh(c, secrets["refresh token"])
	secrets["rotated access token"] = servertest.Str(rt.Body, "access_token")
	secrets["rotated refresh token"] = servertest.Str(rt.Body, "refresh_token")
	e.Refresh(c, secrets["refresh token"]) // a reuse, audited
	e.Form("/oauth/revoke", url.Values{"token": {secrets["rotated refresh token"]}, "client_id": {c.ID}})

	for name, s := range secrets {
		raw, err := base64.RawURLEncoding.DecodeString(secretBody(s))
		if err != nil || len(raw) < 32 {
			t.Errorf("%s %q: %d random bytes, want ≥ 32", name, s, len(raw))
		}
	}

	var dump strings.Builder
	rows, err := e.DB.SQL().Query(`SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'`)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var name string
		rows.Scan(&name)
		tables = append(tables, name)
	}
	rows.Close()
	for _, table := range tables {
		// Table names come from the catalog, not from input.
		r, err := e.DB.SQL().Query(`SELECT row_to_json(t)::text FROM ` + table + ` t`)
		if err != nil {
			t.Fatal(err)
		}
		for r.Next() {
			var line string
			r.Scan(&line)
			dump.WriteString(line + "\n")
		}
		r.Close()
	}
	if row, _ := e.Secrets.ClientRow(c.ID); !strings.Contains(dump.String(), row) {
		t.Fatal("the dump does not even hold the client id: it is not a dump")
	}
	haystacks := map[string]string{"database": dump.String(), "log": e.Logs.String()}
	for where, hay := range haystacks {
		for name, s := range secrets {
			if strings.Contains(hay, s) || strings.Contains(hay, secretBody(s)) {
				t.Errorf("%s holds the %s", where, name)
			}
		}
	}
	// Every stored hash is 32 bytes.
	for _, q := range []string{
		`SELECT count(*)::text FROM oauth_tokens WHERE length(token_hash) <> 32`,
		`SELECT count(*)::text FROM oauth_codes WHERE length(code_hash) <> 32`,
		`SELECT count(*)::text FROM oauth_requests WHERE length(handle_hash) <> 32`,
		`SELECT count(*)::text FROM browser_sessions WHERE length(token_hash) <> 32`,
		`SELECT count(*)::text FROM signin_links WHERE length(token_hash) <> 32`,
	} {
		if n := e.QueryString(q); n != "0" {
			t.Errorf("%s = %s", q, n)
		}
	}
}

// TestAZ02TokensFromTheFlow: tokens the authorization server issued are
// refused at /mcp when bound to another resource, expired, revoked (RFC 7009
// or revoke-token), their grant revoked (revoke-grant), random, or sent in
// the query string; a valid one works. The admin's list-grants sees them.
func TestAZ02TokensFromTheFlow(t *testing.T) {
	t.Parallel()
	e, clock := servertest.NewOAuth(t)
	tn := e.NewTenant("o", "r")
	c := e.Register("https://client.example/cb")
	invalid := func(name, tok string) {
		t.Helper()
		r := e.RPC(tok, "tools/list", nil)
		if r.Status != http.StatusUnauthorized || !strings.Contains(r.Header.Get("WWW-Authenticate"), `error="invalid_token"`) {
			t.Errorf("%s: %d %q", name, r.Status, r.Header.Get("WWW-Authenticate"))
		}
	}
	control := servertest.Str(e.Tokens(t, tn, c, "memory:read").Body, "access_token")
	if s := e.MCPStatus(control); s != 200 {
		t.Fatalf("control: %d", s)
	}

	other := servertest.Str(e.Tokens(t, tn, c, "memory:read").Body, "access_token")
	e.Exec(`UPDATE oauth_tokens SET resource = 'https://other.example/mcp' WHERE token_hash = $1`, oauth.Hash(other))
	invalid("(a) other resource", other)

	viaRFC7009 := servertest.Str(e.Tokens(t, tn, c, "memory:read").Body, "access_token")
	e.Form("/oauth/revoke", url.Values{"token": {viaRFC7009}, "client_id": {c.ID}})
	invalid("(c) revoked by the client", viaRFC7009)

	grants, err := e.DB.ListGrants(t.Context(), tn.Project)
	if err != nil || len(grants) != 1 || grants[0].ClientName != "Test Client" || len(grants[0].ActiveTokens) == 0 {
		t.Fatalf("list-grants: %+v, %v", grants, err)
	}
	viaAdmin := servertest.Str(e.Tokens(t, tn, c, "memory:read").Body, "access_token")
	id := e.QueryString(`SELECT id::text FROM oauth_tokens WHERE token_hash = $1`, oauth.Hash(viaAdmin))
	if _, err := e.DB.RevokeOAuthToken(t.Context(), id); err != nil {
		t.Fatal(err)
	}
	invalid("(c) revoked by revoke-token", viaAdmin)

	invalid("(e) random", "hya_"+servertest.RandomB64())
	req, _ := http.NewRequest("POST", e.Srv.URL+"/mcp?access_token="+url.QueryEscape(control), strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 || strings.Contains(resp.Header.Get("WWW-Authenticate"), "error=") {
		t.Errorf("(f) query-string token: %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}

	clock.Advance(time.Hour + time.Second)
	invalid("(b) expired", control)
	fresh := e.Tokens(t, tn, c, "memory:read")
	if s := e.MCPStatus(servertest.Str(fresh.Body, "access_token")); s != 200 {
		t.Fatalf("fresh token: %d", s)
	}
	if _, err := e.DB.RevokeGrant(t.Context(), grants[0].ID); err != nil {
		t.Fatal(err)
	}
	invalid("(d) grant revoked", servertest.Str(fresh.Body, "access_token"))
	if r := e.Refresh(c, servertest.Str(fresh.Body, "refresh_token")); r.Body["error"] != "invalid_grant" {
		t.Errorf("(d) refresh of a revoked grant: %d %s", r.Status, r.Raw)
	}
	// A new authorization after revoke-grant makes a new grant.
	e.Tokens(t, tn, c, "memory:read")
	if n := e.QueryString(`SELECT count(*)::text FROM oauth_grants WHERE revoked_at IS NULL`); n != "1" {
		t.Errorf("%s active grants after re-authorization, want 1", n)
	}
}

// secretBody strips a secret's type prefix ("hya_" …), if it has one.
func secretBody(s string) string {
	if len(s) == 47 && strings.HasPrefix(s, "hy") && s[3] == '_' {
		return s[4:]
	}
	return s
}
