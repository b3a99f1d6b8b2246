package authserver_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"heyaira/oauth"
	"heyaira/server/internal/servertest"
)

// TestBT41SigninLinkHandOff: a forwarded sign-in link (login CSRF by
// hand-off). The page says whose link it is, principal and account. When
// the browser is already signed in as another principal the page says so,
// and only an explicit switch, posted with the form's CSRF token, replaces
// that session; a plain post changes nothing and leaves the link usable.
func TestBT41SigninLinkHandOff(t *testing.T) {
	t.Parallel()
	e, _ := servertest.NewOAuth(t)
	victim := e.NewTenant("o", "r")
	attacker := e.QueryString(`INSERT INTO principals (account_id, name) VALUES
		((SELECT id FROM accounts WHERE name = 'acct' LIMIT 1), 'mallory') RETURNING id`)
	e.Exec(`UPDATE accounts SET name = 'Acme Research'`)
	used := func(link string) string {
		return e.QueryString(`SELECT (used_at IS NOT NULL)::text FROM signin_links WHERE token_hash = $1`, oauth.Hash(link))
	}
	signedInAs := func(b *servertest.Browser) string {
		t.Helper()
		return b.Get("/signin").Body
	}

	// Without a session: the page names the link's principal and account.
	fresh := e.Browser(t)
	link := e.SigninLink(attacker)
	p := fresh.Get("/signin?token=" + link)
	for _, want := range []string{"as <strong>mallory</strong>", "account <strong>Acme Research</strong>", `<button type="submit">Sign in</button>`} {
		if !strings.Contains(p.Body, want) {
			t.Errorf("sign-in page without a session lacks %q: %s", want, p.Body)
		}
	}
	if strings.Contains(p.Body, `name="switch"`) {
		t.Error("a switch is offered to a browser with no session")
	}

	// The victim is signed in; the attacker's link is forwarded to them.
	b := e.Browser(t)
	b.SignIn(victim.Principal)
	p = b.Get("/signin?token=" + link)
	for _, want := range []string{"signed in as <strong>ada</strong>", "as <strong>mallory</strong>",
		`name="switch" value="confirm">Sign out ada and sign in as mallory</button>`} {
		if !strings.Contains(p.Body, want) {
			t.Errorf("sign-in page over another session lacks %q: %s", want, p.Body)
		}
	}
	form := servertest.Hidden(p.Body)
	// A plain post (what today's page sends, or a form without the switch)
	// changes nothing.
	r := b.Post("/signin", form)
	if r.Status != http.StatusConflict || !strings.Contains(r.Body, "Nothing changed") {
		t.Errorf("post without the switch: %d %s", r.Status, r.Body)
	}
	form.Set("switch", "yes")
	if r := b.Post("/signin", form); r.Status != http.StatusConflict {
		t.Errorf("post with a wrong switch value: %d", r.Status)
	}
	if used(link) != "false" || !strings.Contains(signedInAs(b), "signed in as <strong>ada</strong>") {
		t.Fatal("the victim's session was replaced without the switch")
	}
	// The switch needs this browser's CSRF token: a page elsewhere cannot
	// post it.
	if r := b.Post("/signin", url.Values{"token": {link}, "switch": {"confirm"}, "csrf": {"x"}}); r.Status != http.StatusForbidden {
		t.Errorf("switch without CSRF: %d", r.Status)
	}
	// The explicit switch, from the page, replaces the session.
	form.Set("switch", "confirm")
	if r := b.Post("/signin", form); r.Status != http.StatusSeeOther {
		t.Fatalf("explicit switch: %d %s", r.Status, r.Body)
	}
	if used(link) != "true" || !strings.Contains(signedInAs(b), "signed in as <strong>mallory</strong>") {
		t.Error("the explicit switch did not sign in as the link's principal")
	}

	// The same principal's own new link needs no switch.
	again := e.Browser(t)
	again.SignIn(victim.Principal)
	if p := again.Get("/signin?token=" + e.SigninLink(victim.Principal)); strings.Contains(p.Body, `name="switch"`) {
		t.Error("a switch is asked for the principal's own link")
	}
	if r := again.SignIn(victim.Principal); r.Status != http.StatusSeeOther {
		t.Errorf("own link over own session: %d", r.Status)
	}
}
