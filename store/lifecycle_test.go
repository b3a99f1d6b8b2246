package store_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"

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
