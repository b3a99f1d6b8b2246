package server_test

import (
	"net/http"
	"strings"
	"testing"

	"heyaira/server/internal/servertest"
)

// This file shows remove-member and disable-principal (store.RemoveMember,
// store.DisablePrincipal, what the admin commands call) through the real
// HTTP server: what a person held a moment before stops working on the
// next request.

// holdings is everything a signed-in person with a client can hold.
type holdings struct {
	c               servertest.Client
	b               *servertest.Browser // signed in, with a live session
	access, refresh string              // a redeemed family
	code            string              // approved, not yet redeemed
	link            string              // a sign-in link, not yet redeemed
}

func hold(e *servertest.Env, t *testing.T, tn servertest.Tenant) holdings {
	t.Helper()
	h := holdings{c: e.Register("http://127.0.0.1/cb"), b: e.Browser(t)}
	h.b.SignIn(tn.Principal)
	r := e.Exchange(h.c, servertest.CodeFrom(t, h.b.Approve(h.b.Consent(h.c.AuthorizeQuery("memory:read")), tn.Project, "memory:read")))
	if r.Status != http.StatusOK {
		t.Fatalf("exchange: %d %s", r.Status, r.Raw)
	}
	h.access, h.refresh = servertest.Str(r.Body, "access_token"), servertest.Str(r.Body, "refresh_token")
	h.code = servertest.CodeFrom(t, h.b.Approve(h.b.Consent(h.c.AuthorizeQuery("memory:read")), tn.Project, "memory:read"))
	h.link = e.SigninLink(tn.Principal)
	if e.MCPStatus(h.access) != http.StatusOK {
		t.Fatal("the access token does not work before the change")
	}
	return h
}

// checkCredentialsDead: access 401, refresh and code invalid_grant.
func checkCredentialsDead(e *servertest.Env, t *testing.T, h holdings) {
	t.Helper()
	if s := e.MCPStatus(h.access); s != http.StatusUnauthorized {
		t.Errorf("access token on the next request: %d, want 401", s)
	}
	if r := e.Refresh(h.c, h.refresh); r.Status != http.StatusBadRequest || r.Body["error"] != "invalid_grant" {
		t.Errorf("refresh: %d %s, want invalid_grant", r.Status, r.Raw)
	}
	if r := e.Exchange(h.c, h.code); r.Status != http.StatusBadRequest || r.Body["error"] != "invalid_grant" {
		t.Errorf("pending code: %d %s, want invalid_grant", r.Status, r.Raw)
	}
}

// redeem opens a sign-in link in a fresh browser and posts its form, and
// returns the status. A link the page already refuses (used, revoked, its
// principal disabled) has no form to post: that refusal is the status.
func redeem(e *servertest.Env, t *testing.T, link string) (int, *servertest.Browser) {
	t.Helper()
	b := e.Browser(t)
	p := b.Get("/signin?token=" + link)
	if p.Status != http.StatusOK {
		return p.Status, b
	}
	return b.Post("/signin", servertest.Hidden(p.Body)).Status, b
}

// TestLC06RemoveMemberOverHTTP: after remove-member, the access token gets
// 401, refresh and the pending code invalid_grant, the unredeemed sign-in
// link no longer redeems; the session and a sign-in with a new link reach
// no consent page for the project (the person has no other),
// and with another project the consent page does not offer the removed one
// and a forged approval of it is refused.
// Row LC-01 (docs/security-tests.md).
func TestLC06RemoveMemberOverHTTP(t *testing.T) {
	t.Parallel()
	e, _ := servertest.NewOAuth(t)
	tn := e.NewTenant("o", "r")
	h := hold(e, t, tn)
	open := h.b.Consent(h.c.AuthorizeQuery("memory:read")) // a consent page open in the browser

	if _, err := e.DB.RemoveMember(t.Context(), tn.Project, tn.Principal); err != nil {
		t.Fatal(err)
	}
	checkCredentialsDead(e, t, h)
	if p := h.b.Get("/oauth/authorize?" + h.c.AuthorizeQuery("memory:read").Encode()); p.Status != http.StatusForbidden ||
		strings.Contains(p.Body, `name="decision"`) {
		t.Errorf("session after removal: authorize answered %d, want 403 without a consent form", p.Status)
	}
	if p := h.b.Approve(open, tn.Project, "memory:read"); p.Status == http.StatusSeeOther {
		t.Errorf("the consent page opened before removal still approves: %d %s", p.Status, p.Header.Get("Location"))
	}
	if status, _ := redeem(e, t, h.link); status == http.StatusSeeOther {
		t.Errorf("the unredeemed sign-in link of a removed member still signs in")
	}
	// A new link (the person may belong to other projects) signs in, and
	// offers no removed project.
	status, b := redeem(e, t, e.SigninLink(tn.Principal))
	if status != http.StatusSeeOther {
		t.Fatalf("a new sign-in link after removal: %d, want it to sign in", status)
	}
	if p := b.Get("/oauth/authorize?" + h.c.AuthorizeQuery("memory:read").Encode()); p.Status != http.StatusForbidden {
		t.Errorf("fresh sign-in after removal: authorize answered %d, want 403", p.Status)
	}

	// With another project, the consent page offers only that one.
	other := e.QueryString(`INSERT INTO projects (account_id, name) VALUES ($1, 'other-project') RETURNING id`, tn.Account)
	e.Exec(`INSERT INTO project_members (project_id, principal_id) VALUES ($1, $2)`, other, tn.Principal)
	consent := b.Consent(h.c.AuthorizeQuery("memory:read"))
	if strings.Contains(consent.Body, tn.Project) || !strings.Contains(consent.Body, other) {
		t.Errorf("consent page after removal offers the removed project, or not the other one")
	}
	if p := b.Approve(consent, tn.Project, "memory:read"); p.Status == http.StatusSeeOther {
		t.Errorf("a forged approval of the removed project was accepted: %s", p.Header.Get("Location"))
	}
	if n := e.QueryString(`SELECT count(*)::text FROM oauth_grants WHERE project_id = $1 AND revoked_at IS NULL`, tn.Project); n != "0" {
		t.Errorf("%s live grants in the removed project", n)
	}
}

// TestLC07DisablePrincipalOverHTTP: after disable-principal, the access
// token gets 401, refresh and the pending code invalid_grant, the browser
// session cannot reach the consent page, the unredeemed sign-in link does
// not redeem and no new one can be made. enable-principal restores sign-in
// and nothing else.
// Rows LC-02, LC-03 (docs/security-tests.md).
func TestLC07DisablePrincipalOverHTTP(t *testing.T) {
	t.Parallel()
	e, _ := servertest.NewOAuth(t)
	tn := e.NewTenant("o", "r")
	h := hold(e, t, tn)
	open := h.b.Consent(h.c.AuthorizeQuery("memory:read"))

	if _, err := e.DB.DisablePrincipal(t.Context(), tn.Principal); err != nil {
		t.Fatal(err)
	}
	checkCredentialsDead(e, t, h)
	if p := h.b.Get("/oauth/authorize?" + h.c.AuthorizeQuery("memory:read").Encode()); p.Status != http.StatusSeeOther ||
		p.Header.Get("Location") != "/signin" {
		t.Errorf("session after disable: authorize answered %d %q, want 303 to /signin", p.Status, p.Header.Get("Location"))
	}
	if p := h.b.Approve(open, tn.Project, "memory:read"); p.Status == http.StatusSeeOther &&
		strings.Contains(p.Header.Get("Location"), "code=") {
		t.Errorf("the consent page opened before disable still approves: %s", p.Header.Get("Location"))
	}
	if status, _ := redeem(e, t, h.link); status != http.StatusBadRequest {
		t.Errorf("the unredeemed sign-in link of a disabled principal: %d, want 400", status)
	}
	if _, err := e.DB.CreateSigninLink(t.Context(), tn.Principal, make([]byte, 32), 60e9); err == nil ||
		!strings.Contains(err.Error(), "is disabled") {
		t.Errorf("a new sign-in link for a disabled principal: %v", err)
	}

	if _, err := e.DB.EnablePrincipal(t.Context(), tn.Principal); err != nil {
		t.Fatal(err)
	}
	if status, _ := redeem(e, t, h.link); status != http.StatusBadRequest {
		t.Errorf("a link revoked by disable redeems after enable: %d", status)
	}
	checkCredentialsDead(e, t, h)
	b := e.Browser(t)
	b.SignIn(tn.Principal) // a new link works: sign-in is restored
	b.Consent(h.c.AuthorizeQuery("memory:read"))
	if n := e.QueryString(`SELECT count(*)::text FROM oauth_grants WHERE principal_id = $1 AND revoked_at IS NULL`, tn.Principal); n != "0" {
		t.Errorf("enable-principal revived %s grants", n)
	}
}
