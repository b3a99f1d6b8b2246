package server_test

// Cryptography row CR-03 at the server: every secret has one purpose. A
// prefix names the kind (hya_, hyr_, hyc_, hys_, hyq_, hyx_) and each is
// looked up only where that kind is expected, so no secret of one kind
// works as another.

import (
	"net/http"
	"strings"
	"testing"

	"heyaira/server/internal/servertest"
)

// Row CR-03: type confusion. A cursor, a refresh token, a code, a session
// cookie or a sign-in link as a bearer token is 401 invalid_token; an
// access token or a code as a refresh token, and a refresh token as a
// code, is invalid_grant; a sign-in link secret as a session cookie is no
// session (the browser is sent to sign in).
func TestCR03TypeConfusion(t *testing.T) {
	t.Parallel()
	e, _ := servertest.NewOAuth(t)
	tn := e.NewTenant("o", "r")
	e.GH.AddFile("o", "r", servertest.CommitA, "a.md", servertest.MixedText(3000))
	src := e.AddSource(tn, "runtime", "a.md", servertest.CommitA, "", 1000)
	c := e.Register("http://127.0.0.1/cb")
	b := e.Browser(t)
	b.SignIn(tn.Principal)
	session := servertest.ReadJarCookie(b, e, "heyaira_session")
	code := servertest.CodeFrom(t, b.Approve(b.Consent(c.AuthorizeQuery("")), tn.Project, "documents:read"))
	tk := e.Exchange(c, code)
	access, refresh := servertest.Str(tk.Body, "access_token"), servertest.Str(tk.Body, "refresh_token")
	sc, _, _ := e.Call(access, "git_document_get", map[string]any{"source_id": src})
	cur := sc["next_cursor"].(string)
	bb := browserWithSession(e, t, tn)
	unusedCode := servertest.CodeFrom(t, bb.Approve(bb.Consent(c.AuthorizeQuery("")), tn.Project, "documents:read"))
	link := e.SigninLink(tn.Principal)

	for name, tok := range map[string]string{
		"cursor": cur, "refresh token": refresh, "code": unusedCode, "session cookie": session, "sign-in link": link,
	} {
		r := e.Post(`{"jsonrpc":"2.0","id":1,"method":"ping"}`, "Authorization", "Bearer "+tok)
		if r.Status != 401 || !strings.Contains(r.Header.Get("WWW-Authenticate"), `error="invalid_token"`) {
			t.Errorf("%s as a bearer token: %d %q", name, r.Status, r.Header.Get("WWW-Authenticate"))
		}
	}
	for name, rt := range map[string]string{"access token": access, "code": unusedCode, "session cookie": session} {
		if r := e.Refresh(c, rt); r.Status != 400 || servertest.Str(r.Body, "error") != "invalid_grant" {
			t.Errorf("%s as a refresh token: %d %s", name, r.Status, r.Raw)
		}
	}
	if r := e.Exchange(c, refresh); r.Status != 400 || servertest.Str(r.Body, "error") != "invalid_grant" {
		t.Errorf("a refresh token as a code: %d %s", r.Status, r.Raw)
	}
	// A sign-in link secret planted as the session cookie is no session.
	plain := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, _ := http.NewRequest("GET", e.Srv.URL+"/oauth/authorize?"+c.AuthorizeQuery("").Encode(), nil)
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
	if s := e.MCPStatus(access); s != 200 {
		t.Errorf("the access token after the confusion attempts: %d", s)
	}
}

// browserWithSession is a new browser signed in as the tenant's principal.
func browserWithSession(e *servertest.Env, t *testing.T, tn servertest.Tenant) *servertest.Browser {
	b := e.Browser(t)
	b.SignIn(tn.Principal)
	return b
}
