package store_test

import (
	"errors"
	"sync"
	"testing"

	"heyaira/store"
)

// TestOA18SigninLinkOnce: a link makes one session, once; a planted old
// session is revoked; an expired link fails.
func TestOA18SigninLinkOnce(t *testing.T) {
	t.Parallel()
	tr := newTree(t)
	ctx := t.Context()
	if _, err := tr.db.CreateSigninLink(ctx, tr.principal.ID, h("link"), store.SigninLinkTTL); err != nil {
		t.Fatal(err)
	}
	// A session from an earlier sign-in, which the browser still presents.
	if _, err := tr.db.CreateSigninLink(ctx, tr.principal.ID, h("link0"), store.SigninLinkTTL); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.db.RedeemSigninLink(ctx, h("link0"), h("old"), nil); err != nil {
		t.Fatal(err)
	}
	s, err := tr.db.RedeemSigninLink(ctx, h("link"), h("sess"), h("old"))
	if err != nil || s.PrincipalID != tr.principal.ID || s.PrincipalName != "Ada" || s.AccountID != tr.account.ID {
		t.Fatalf("RedeemSigninLink = %+v, %v", s, err)
	}
	if _, err := tr.db.Session(ctx, h("old")); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("old session = %v, want ErrNotFound (fixation)", err)
	}
	if got, err := tr.db.Session(ctx, h("sess")); err != nil || got.ID != s.ID {
		t.Errorf("Session = %+v, %v", got, err)
	}
	if _, err := tr.db.RedeemSigninLink(ctx, h("link"), h("sess2"), nil); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("second redemption = %v, want ErrNotFound", err)
	}
	if _, err := tr.db.CreateSigninLink(ctx, tr.principal.ID, h("late"), store.SigninLinkTTL); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.db.SQL().ExecContext(ctx, `UPDATE signin_links SET expires_at = now() - interval '1 second'
		WHERE token_hash = $1`, h("late")); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.db.RedeemSigninLink(ctx, h("late"), h("sess3"), nil); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("expired link = %v, want ErrNotFound", err)
	}
	if _, err := tr.db.SQL().ExecContext(ctx, `UPDATE browser_sessions SET expires_at = now() WHERE token_hash = $1`, h("sess")); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.db.Session(ctx, h("sess")); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("expired session = %v, want ErrNotFound", err)
	}
}

// Row OA-18 (docs/security-tests.md).
func TestSigninLinkConcurrentRedemption(t *testing.T) {
	t.Parallel()
	tr := newTree(t)
	if _, err := tr.db.CreateSigninLink(t.Context(), tr.principal.ID, h("link"), store.SigninLinkTTL); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 10)
	for i := range errs {
		wg.Go(func() {
			_, errs[i] = tr.db.RedeemSigninLink(t.Context(), h("link"), h(string(rune('a'+i))), nil)
		})
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		if err == nil {
			ok++
		}
	}
	if ok != 1 {
		t.Errorf("%d sessions from one link, want 1", ok)
	}
}
