package server

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"heyaira/oauth"
)

// TestCR02SecretsStoredOnlyHashed runs the whole flow, collects every secret
// a browser or client ever sees (sign-in link, CSRF cookie and field, session
// cookie, request handle, consent CSRF, code, access and refresh tokens),
// checks their entropy, then dumps every table and the server's log and
// finds none of them, in the clear or base64-decoded.
// Row LG-01 (docs/security-tests.md).
func TestCR02SecretsStoredOnlyHashed(t *testing.T) {
	t.Parallel()
	e, _ := newOAuthEnv(t)
	tn := e.newTenant("o", "r")
	c := e.register("http://127.0.0.1/cb")
	secrets := map[string]string{}

	b := e.browser(t)
	link := e.signinLink(tn.principal)
	secrets["signin link"] = link
	q := c.authorizeQuery("")
	b.get("/oauth/authorize?" + q.Encode()) // pending cookie, then sign-in
	sp := b.get("/signin?token=" + link)
	secrets["signin csrf field"] = hidden(sp.body).Get("csrf")
	secrets["signin csrf cookie"] = readJarCookie(b, e, "heyaira_signin_csrf")
	next := b.post("/signin", hidden(sp.body)).header.Get("Location")
	secrets["session cookie"] = readJarCookie(b, e, "heyaira_session")
	consent := b.get(next)
	secrets["request handle"] = hidden(consent.body).Get("request")
	secrets["consent csrf"] = hidden(consent.body).Get("csrf")
	code := codeFrom(t, b.approve(consent, tn.project, "memory:read", "documents:read"))
	secrets["code"] = code
	tk := e.exchange(c, code)
	secrets["access token"] = str(tk.body, "access_token")
	secrets["refresh token"] = str(tk.body, "refresh_token")
	rt := e.refresh(c, secrets["refresh token"])
	secrets["rotated access token"] = str(rt.body, "access_token")
	secrets["rotated refresh token"] = str(rt.body, "refresh_token")
	e.refresh(c, secrets["refresh token"]) // a reuse, audited
	e.form("/oauth/revoke", url.Values{"token": {secrets["rotated refresh token"]}, "client_id": {c.id}})

	for name, s := range secrets {
		raw, err := base64.RawURLEncoding.DecodeString(secretBody(s))
		if err != nil || len(raw) < 32 {
			t.Errorf("%s %q: %d random bytes, want ≥ 32", name, s, len(raw))
		}
	}

	var dump strings.Builder
	rows, err := e.db.SQL().Query(`SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'`)
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
		r, err := e.db.SQL().Query(`SELECT row_to_json(t)::text FROM ` + table + ` t`)
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
	if row, _ := e.secrets.ClientRow(c.id); !strings.Contains(dump.String(), row) {
		t.Fatal("the dump does not even hold the client id: it is not a dump")
	}
	haystacks := map[string]string{"database": dump.String(), "log": e.logs.String()}
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
		if n := e.queryString(q); n != "0" {
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
	e, clock := newOAuthEnv(t)
	tn := e.newTenant("o", "r")
	c := e.register("https://client.example/cb")
	invalid := func(name, tok string) {
		t.Helper()
		r := e.rpc(tok, "tools/list", nil)
		if r.status != http.StatusUnauthorized || !strings.Contains(r.header.Get("WWW-Authenticate"), `error="invalid_token"`) {
			t.Errorf("%s: %d %q", name, r.status, r.header.Get("WWW-Authenticate"))
		}
	}
	control := str(e.tokens(t, tn, c, "memory:read").body, "access_token")
	if s := e.mcpStatus(control); s != 200 {
		t.Fatalf("control: %d", s)
	}

	other := str(e.tokens(t, tn, c, "memory:read").body, "access_token")
	e.exec(`UPDATE oauth_tokens SET resource = 'https://other.example/mcp' WHERE token_hash = $1`, oauth.Hash(other))
	invalid("(a) other resource", other)

	viaRFC7009 := str(e.tokens(t, tn, c, "memory:read").body, "access_token")
	e.form("/oauth/revoke", url.Values{"token": {viaRFC7009}, "client_id": {c.id}})
	invalid("(c) revoked by the client", viaRFC7009)

	grants, err := e.db.ListGrants(t.Context(), tn.project)
	if err != nil || len(grants) != 1 || grants[0].ClientName != "Test Client" || len(grants[0].ActiveTokens) == 0 {
		t.Fatalf("list-grants: %+v, %v", grants, err)
	}
	viaAdmin := str(e.tokens(t, tn, c, "memory:read").body, "access_token")
	id := e.queryString(`SELECT id::text FROM oauth_tokens WHERE token_hash = $1`, oauth.Hash(viaAdmin))
	if _, err := e.db.RevokeOAuthToken(t.Context(), id); err != nil {
		t.Fatal(err)
	}
	invalid("(c) revoked by revoke-token", viaAdmin)

	invalid("(e) random", "hya_"+randomB64())
	req, _ := http.NewRequest("POST", e.srv.URL+"/mcp?access_token="+url.QueryEscape(control), strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 || strings.Contains(resp.Header.Get("WWW-Authenticate"), "error=") {
		t.Errorf("(f) query-string token: %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}

	clock.advance(time.Hour + time.Second)
	invalid("(b) expired", control)
	fresh := e.tokens(t, tn, c, "memory:read")
	if s := e.mcpStatus(str(fresh.body, "access_token")); s != 200 {
		t.Fatalf("fresh token: %d", s)
	}
	if _, err := e.db.RevokeGrant(t.Context(), grants[0].ID); err != nil {
		t.Fatal(err)
	}
	invalid("(d) grant revoked", str(fresh.body, "access_token"))
	if r := e.refresh(c, str(fresh.body, "refresh_token")); r.body["error"] != "invalid_grant" {
		t.Errorf("(d) refresh of a revoked grant: %d %s", r.status, r.raw)
	}
	// A new authorization after revoke-grant makes a new grant.
	e.tokens(t, tn, c, "memory:read")
	if n := e.queryString(`SELECT count(*)::text FROM oauth_grants WHERE revoked_at IS NULL`); n != "1" {
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
