package server

import (
	"net/http"
	"strings"
	"testing"
)

// This file shows remove-member and disable-principal (store.RemoveMember,
// store.DisablePrincipal, what the admin commands call) through the real
// HTTP server: what a person held a moment before stops working on the
// next request.

// holdings is everything a signed-in person with a client can hold.
type holdings struct {
	c               client
	b               *browser // signed in, with a live session
	access, refresh string   // a redeemed family
	code            string   // approved, not yet redeemed
	link            string   // a sign-in link, not yet redeemed
}

func (e *testEnv) hold(t *testing.T, tn tenant) holdings {
	t.Helper()
	h := holdings{c: e.register("http://127.0.0.1/cb"), b: e.browser(t)}
	h.b.signIn(tn.principal)
	r := e.exchange(h.c, codeFrom(t, h.b.approve(h.b.consent(h.c.authorizeQuery("memory:read")), tn.project, "memory:read")))
	if r.status != http.StatusOK {
		t.Fatalf("exchange: %d %s", r.status, r.raw)
	}
	h.access, h.refresh = str(r.body, "access_token"), str(r.body, "refresh_token")
	h.code = codeFrom(t, h.b.approve(h.b.consent(h.c.authorizeQuery("memory:read")), tn.project, "memory:read"))
	h.link = e.signinLink(tn.principal)
	if e.mcpStatus(h.access) != http.StatusOK {
		t.Fatal("the access token does not work before the change")
	}
	return h
}

// checkCredentialsDead: access 401, refresh and code invalid_grant.
func (e *testEnv) checkCredentialsDead(t *testing.T, h holdings) {
	t.Helper()
	if s := e.mcpStatus(h.access); s != http.StatusUnauthorized {
		t.Errorf("access token on the next request: %d, want 401", s)
	}
	if r := e.refresh(h.c, h.refresh); r.status != http.StatusBadRequest || r.body["error"] != "invalid_grant" {
		t.Errorf("refresh: %d %s, want invalid_grant", r.status, r.raw)
	}
	if r := e.exchange(h.c, h.code); r.status != http.StatusBadRequest || r.body["error"] != "invalid_grant" {
		t.Errorf("pending code: %d %s, want invalid_grant", r.status, r.raw)
	}
}

// redeem opens a sign-in link in a fresh browser and posts its form, and
// returns the status. A link the page already refuses (used, revoked, its
// principal disabled) has no form to post: that refusal is the status.
func (e *testEnv) redeem(t *testing.T, link string) (int, *browser) {
	t.Helper()
	b := e.browser(t)
	p := b.get("/signin?token=" + link)
	if p.status != http.StatusOK {
		return p.status, b
	}
	return b.post("/signin", hidden(p.body)).status, b
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
	e, _ := newOAuthEnv(t)
	tn := e.newTenant("o", "r")
	h := e.hold(t, tn)
	open := h.b.consent(h.c.authorizeQuery("memory:read")) // a consent page open in the browser

	if _, err := e.db.RemoveMember(t.Context(), tn.project, tn.principal); err != nil {
		t.Fatal(err)
	}
	e.checkCredentialsDead(t, h)
	if p := h.b.get("/oauth/authorize?" + h.c.authorizeQuery("memory:read").Encode()); p.status != http.StatusForbidden ||
		strings.Contains(p.body, `name="decision"`) {
		t.Errorf("session after removal: authorize answered %d, want 403 without a consent form", p.status)
	}
	if p := h.b.approve(open, tn.project, "memory:read"); p.status == http.StatusSeeOther {
		t.Errorf("the consent page opened before removal still approves: %d %s", p.status, p.header.Get("Location"))
	}
	if status, _ := e.redeem(t, h.link); status == http.StatusSeeOther {
		t.Errorf("the unredeemed sign-in link of a removed member still signs in")
	}
	// A new link (the person may belong to other projects) signs in, and
	// offers no removed project.
	status, b := e.redeem(t, e.signinLink(tn.principal))
	if status != http.StatusSeeOther {
		t.Fatalf("a new sign-in link after removal: %d, want it to sign in", status)
	}
	if p := b.get("/oauth/authorize?" + h.c.authorizeQuery("memory:read").Encode()); p.status != http.StatusForbidden {
		t.Errorf("fresh sign-in after removal: authorize answered %d, want 403", p.status)
	}

	// With another project, the consent page offers only that one.
	other := e.queryString(`INSERT INTO projects (account_id, name) VALUES ($1, 'other-project') RETURNING id`, tn.account)
	e.exec(`INSERT INTO project_members (project_id, principal_id) VALUES ($1, $2)`, other, tn.principal)
	consent := b.consent(h.c.authorizeQuery("memory:read"))
	if strings.Contains(consent.body, tn.project) || !strings.Contains(consent.body, other) {
		t.Errorf("consent page after removal offers the removed project, or not the other one")
	}
	if p := b.approve(consent, tn.project, "memory:read"); p.status == http.StatusSeeOther {
		t.Errorf("a forged approval of the removed project was accepted: %s", p.header.Get("Location"))
	}
	if n := e.queryString(`SELECT count(*)::text FROM oauth_grants WHERE project_id = $1 AND revoked_at IS NULL`, tn.project); n != "0" {
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
	e, _ := newOAuthEnv(t)
	tn := e.newTenant("o", "r")
	h := e.hold(t, tn)
	open := h.b.consent(h.c.authorizeQuery("memory:read"))

	if _, err := e.db.DisablePrincipal(t.Context(), tn.principal); err != nil {
		t.Fatal(err)
	}
	e.checkCredentialsDead(t, h)
	if p := h.b.get("/oauth/authorize?" + h.c.authorizeQuery("memory:read").Encode()); p.status != http.StatusSeeOther ||
		p.header.Get("Location") != "/signin" {
		t.Errorf("session after disable: authorize answered %d %q, want 303 to /signin", p.status, p.header.Get("Location"))
	}
	if p := h.b.approve(open, tn.project, "memory:read"); p.status == http.StatusSeeOther &&
		strings.Contains(p.header.Get("Location"), "code=") {
		t.Errorf("the consent page opened before disable still approves: %s", p.header.Get("Location"))
	}
	if status, _ := e.redeem(t, h.link); status != http.StatusBadRequest {
		t.Errorf("the unredeemed sign-in link of a disabled principal: %d, want 400", status)
	}
	if _, err := e.db.CreateSigninLink(t.Context(), tn.principal, make([]byte, 32), 60e9); err == nil ||
		!strings.Contains(err.Error(), "is disabled") {
		t.Errorf("a new sign-in link for a disabled principal: %v", err)
	}

	if _, err := e.db.EnablePrincipal(t.Context(), tn.principal); err != nil {
		t.Fatal(err)
	}
	if status, _ := e.redeem(t, h.link); status != http.StatusBadRequest {
		t.Errorf("a link revoked by disable redeems after enable: %d", status)
	}
	e.checkCredentialsDead(t, h)
	b := e.browser(t)
	b.signIn(tn.principal) // a new link works: sign-in is restored
	b.consent(h.c.authorizeQuery("memory:read"))
	if n := e.queryString(`SELECT count(*)::text FROM oauth_grants WHERE principal_id = $1 AND revoked_at IS NULL`, tn.principal); n != "0" {
		t.Errorf("enable-principal revived %s grants", n)
	}
}
