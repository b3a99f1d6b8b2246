package server

// Cryptography row CR-03 at the server: every secret has one purpose. A
// prefix names the kind (hya_, hyr_, hyc_, hys_, hyq_, hyx_) and each is
// looked up only where that kind is expected, so no secret of one kind
// works as another.

import (
	"net/http"
	"strings"
	"testing"
)

// Row CR-03: type confusion. A cursor, a refresh token, a code, a session
// cookie or a sign-in link as a bearer token is 401 invalid_token; an
// access token or a code as a refresh token, and a refresh token as a
// code, is invalid_grant; a sign-in link secret as a session cookie is no
// session (the browser is sent to sign in).
func TestCR03TypeConfusion(t *testing.T) {
	t.Parallel()
	e, _ := newOAuthEnv(t)
	tn := e.newTenant("o", "r")
	e.gh.AddFile("o", "r", commitA, "a.md", mixedText(3000))
	src := e.addSource(tn, "runtime", "a.md", commitA, "", 1000)
	c := e.register("http://127.0.0.1/cb")
	b := e.browser(t)
	b.signIn(tn.principal)
	session := readJarCookie(b, e, "heyaira_session")
	code := codeFrom(t, b.approve(b.consent(c.authorizeQuery("")), tn.project, "documents:read"))
	tk := e.exchange(c, code)
	access, refresh := str(tk.body, "access_token"), str(tk.body, "refresh_token")
	sc, _, _ := e.call(access, "git_document_get", map[string]any{"source_id": src})
	cur := sc["next_cursor"].(string)
	bb := e.browserWithSession(t, tn)
	unusedCode := codeFrom(t, bb.approve(bb.consent(c.authorizeQuery("")), tn.project, "documents:read"))
	link := e.signinLink(tn.principal)

	for name, tok := range map[string]string{
		"cursor": cur, "refresh token": refresh, "code": unusedCode, "session cookie": session, "sign-in link": link,
	} {
		r := e.post(`{"jsonrpc":"2.0","id":1,"method":"ping"}`, "Authorization", "Bearer "+tok)
		if r.status != 401 || !strings.Contains(r.header.Get("WWW-Authenticate"), `error="invalid_token"`) {
			t.Errorf("%s as a bearer token: %d %q", name, r.status, r.header.Get("WWW-Authenticate"))
		}
	}
	for name, rt := range map[string]string{"access token": access, "code": unusedCode, "session cookie": session} {
		if r := e.refresh(c, rt); r.status != 400 || str(r.body, "error") != "invalid_grant" {
			t.Errorf("%s as a refresh token: %d %s", name, r.status, r.raw)
		}
	}
	if r := e.exchange(c, refresh); r.status != 400 || str(r.body, "error") != "invalid_grant" {
		t.Errorf("a refresh token as a code: %d %s", r.status, r.raw)
	}
	// A sign-in link secret planted as the session cookie is no session.
	plain := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, _ := http.NewRequest("GET", e.srv.URL+"/oauth/authorize?"+c.authorizeQuery("").Encode(), nil)
	req.AddCookie(&http.Cookie{Name: "heyaira_session", Value: link})
	resp, err := plain.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/signin" {
		t.Errorf("sign-in link as a session cookie: %d %q, want 303 to /signin", resp.StatusCode, resp.Header.Get("Location"))
	}
	// The real access token still works: the refusals above revoked nothing.
	if s := e.mcpStatus(access); s != 200 {
		t.Errorf("the access token after the confusion attempts: %d", s)
	}
}

// browserWithSession is a new browser signed in as the tenant's principal.
func (e *testEnv) browserWithSession(t *testing.T, tn tenant) *browser {
	b := e.browser(t)
	b.signIn(tn.principal)
	return b
}
