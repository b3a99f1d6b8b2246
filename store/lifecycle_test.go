package store_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"heyaira/store"
)

// TestLC03DisableRacesSignin: disable-principal racing the making and the
// redeeming of sign-in links never leaves the disabled principal a live
// link or session. Each race either refuses the link (made after the
// disable) or has the disable revoke it (made before): the share lock of
// lockEnabledPrincipal waits for a disable in progress and then reads it.
func TestLC03DisableRacesSignin(t *testing.T) {
	t.Parallel()
	tr := newTree(t)
	ctx := t.Context()
	const rounds = 20
	for i := range rounds {
		u, err := tr.db.CreatePrincipal(ctx, tr.account.ID, fmt.Sprintf("p%d", i))
		if err != nil {
			t.Fatal(err)
		}
		ready := h(fmt.Sprintf("ready-%d", i))
		if _, err := tr.db.CreateSigninLink(ctx, u.ID, ready, store.SigninLinkTTL); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make([]error, 3)
		wg.Add(3)
		go func() {
			defer wg.Done()
			_, errs[0] = tr.db.DisablePrincipal(ctx, u.ID)
		}()
		go func() {
			defer wg.Done()
			_, errs[1] = tr.db.CreateSigninLink(ctx, u.ID, h(fmt.Sprintf("new-%d", i)), store.SigninLinkTTL)
		}()
		go func() {
			defer wg.Done()
			_, errs[2] = tr.db.RedeemSigninLink(ctx, ready, h(fmt.Sprintf("sess-%d", i)), nil)
		}()
		wg.Wait()
		if errs[0] != nil {
			t.Fatalf("round %d: DisablePrincipal: %v", i, errs[0])
		}
		if errs[1] != nil && !errors.Is(errs[1], store.ErrConflict) {
			t.Fatalf("round %d: CreateSigninLink: %v", i, errs[1])
		}
		if errs[2] != nil && !errors.Is(errs[2], store.ErrNotFound) {
			t.Fatalf("round %d: RedeemSigninLink: %v", i, errs[2])
		}
		var links, sessions int
		if err := tr.db.SQL().QueryRowContext(ctx, `SELECT
			(SELECT count(*) FROM signin_links WHERE principal_id = $1 AND used_at IS NULL AND revoked_at IS NULL),
			(SELECT count(*) FROM browser_sessions WHERE principal_id = $1 AND revoked_at IS NULL)`, u.ID).Scan(&links, &sessions); err != nil {
			t.Fatal(err)
		}
		if links != 0 || sessions != 0 {
			t.Errorf("round %d: the disabled principal keeps %d live link(s), %d session(s)", i, links, sessions)
		}
		if _, err := tr.db.Session(ctx, h(fmt.Sprintf("sess-%d", i))); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("round %d: a session of the disabled principal is honoured: %v", i, err)
		}
	}
}

// TestLC03DisableRacesOAuth: disable-principal racing an approval, a code
// redemption and a refresh leaves no live grant or token, and the disable
// itself always succeeds: a refresh takes the grant's locks before its
// token's, in the disable's order (TestRefreshLocksGrantBeforeToken).
func TestLC03DisableRacesOAuth(t *testing.T) {
	t.Parallel()
	tr, c := oauthTree(t)
	ctx := t.Context()
	scopes := []string{"memory:read"}
	for i := range 10 {
		u, err := tr.db.CreatePrincipal(ctx, tr.account.ID, fmt.Sprintf("p%d", i))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tr.db.AddMember(ctx, tr.project.ID, u.ID); err != nil {
			t.Fatal(err)
		}
		ut := tree{db: tr.db, account: tr.account, project: tr.project, principal: u}
		name := func(s string) string { return fmt.Sprintf("%s-%d", s, i) }
		approve(t, ut, c, name("redeem"), scopes, scopes)
		approve(t, ut, c, name("rotate"), scopes, scopes)
		if _, err := redeem(t, ut, c, name("rotate"), t0); err != nil {
			t.Fatal(err)
		}
		if err := tr.db.CreateAuthRequest(ctx, h(name("req")), store.AuthRequest{ClientID: c.ID,
			RedirectURI: "http://127.0.0.1:5/cb", CodeChallenge: "ch", Scopes: scopes,
			Resource: "http://x/mcp", ExpiresAt: t0.Add(10 * time.Minute)}); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var disableErr error
		wg.Add(4)
		go func() {
			defer wg.Done()
			_, disableErr = tr.db.DisablePrincipal(ctx, u.ID)
		}()
		go func() {
			defer wg.Done()
			tr.db.ApproveAuthRequest(ctx, store.Approval{HandleHash: h(name("req")), PrincipalID: u.ID,
				ProjectID: tr.project.ID, Scopes: scopes, CodeHash: h(name("code-new")), Now: t0, CodeTTL: time.Minute})
		}()
		go func() {
			defer wg.Done()
			redeem(t, ut, c, name("redeem"), t0)
		}()
		go func() {
			defer wg.Done()
			tr.db.RotateRefresh(ctx, store.Rotation{RefreshHash: h("rt" + name("rotate") + t0.String()), ClientID: c.ID,
				Now: t0.Add(time.Minute), Tokens: store.NewTokens{AccessHash: h(name("at2")), AccessTTL: time.Hour,
					RefreshHash: h(name("rt2"))}})
		}()
		wg.Wait()
		if disableErr != nil {
			t.Fatalf("round %d: DisablePrincipal: %v", i, disableErr)
		}
		var grants, tokens int
		if err := tr.db.SQL().QueryRowContext(ctx, `SELECT
			(SELECT count(*) FROM oauth_grants WHERE principal_id = $1 AND revoked_at IS NULL),
			(SELECT count(*) FROM oauth_tokens t JOIN oauth_grants g ON g.id = t.grant_id
			 WHERE g.principal_id = $1 AND t.revoked_at IS NULL)`, u.ID).Scan(&grants, &tokens); err != nil {
			t.Fatal(err)
		}
		if grants != 0 || tokens != 0 {
			t.Errorf("round %d: the disabled principal keeps %d live grant(s), %d live token(s)", i, grants, tokens)
		}
	}
}
