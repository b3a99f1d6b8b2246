package store_test

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"heyaira/store"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func h(s string) []byte { b := sha256.Sum256([]byte(s)); return b[:] }

var t0 = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// oauthTree is a tree whose principal is a member of its project, with one
// registered client.
func oauthTree(t *testing.T) (tree, store.Client) {
	t.Helper()
	tr := newTree(t)
	if _, err := tr.db.AddMember(t.Context(), tr.project.ID, tr.principal.ID); err != nil {
		t.Fatal(err)
	}
	c, err := tr.db.RegisterClient(t.Context(), "Inspector", []string{"http://127.0.0.1/cb"},
		[]string{"authorization_code", "refresh_token"})
	if err != nil {
		t.Fatal(err)
	}
	return tr, c
}

// approve stores a request and approves it, returning the code's hash name.
func approve(t *testing.T, tr tree, c store.Client, name string, requested, approved []string) store.Answered {
	t.Helper()
	if err := tr.db.CreateAuthRequest(t.Context(), h("req"+name), store.AuthRequest{ClientID: c.ID,
		RedirectURI: "http://127.0.0.1:5/cb", CodeChallenge: "ch", Scopes: requested,
		Resource: "http://x/mcp", State: "st", ExpiresAt: t0.Add(10 * time.Minute)}); err != nil {
		t.Fatal(err)
	}
	a, err := tr.db.ApproveAuthRequest(t.Context(), store.Approval{HandleHash: h("req" + name),
		PrincipalID: tr.principal.ID, ProjectID: tr.project.ID, Scopes: approved,
		CodeHash: h("code" + name), Now: t0, CodeTTL: 10 * time.Minute})
	if err != nil {
		t.Fatalf("approve %s: %v", name, err)
	}
	return a
}

func redeem(t *testing.T, tr tree, c store.Client, name string, at time.Time) (store.Issued, error) {
	t.Helper()
	return tr.db.RedeemCode(t.Context(), store.CodeRedemption{CodeHash: h("code" + name), ClientID: c.ID, Now: at,
		Tokens: store.NewTokens{AccessHash: h("at" + name + at.String()), AccessTTL: time.Hour,
			RefreshHash: h("rt" + name + at.String()), RefreshTTL: 30 * 24 * time.Hour}})
}

func TestRegisterClient(t *testing.T) {
	t.Parallel()
	tr, c := oauthTree(t)
	got, err := tr.db.Client(t.Context(), c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(c, got, cmpIgnoreTime); diff != "" || !got.HasGrantType("refresh_token") {
		t.Errorf("Client mismatch (-want +got):\n%s", diff)
	}
	for _, id := range []string{missingID, "not-a-uuid", ""} {
		if _, err := tr.db.Client(t.Context(), id); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Client(%q) = %v, want ErrNotFound", id, err)
		}
	}
}

// TestAZ13ApproveRederivesEverything: the approval takes client, redirect,
// challenge and state from the stored request; refuses a project the
// principal is not in and scopes that were not requested, writing nothing.
func TestAZ13ApproveRederivesEverything(t *testing.T) {
	t.Parallel()
	tr, c := oauthTree(t)
	ctx := t.Context()
	other, err := tr.db.CreateProject(ctx, tr.account.ID, "Other")
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.db.CreateAuthRequest(ctx, h("r"), store.AuthRequest{ClientID: c.ID, RedirectURI: "http://127.0.0.1:5/cb",
		CodeChallenge: "ch", Scopes: []string{"memory:read"}, Resource: "http://x/mcp", ExpiresAt: t0.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	base := store.Approval{HandleHash: h("r"), PrincipalID: tr.principal.ID, ProjectID: tr.project.ID,
		Scopes: []string{"memory:read"}, CodeHash: h("c"), Now: t0, CodeTTL: time.Minute}
	for name, mut := range map[string]func(*store.Approval){
		"foreign project":   func(a *store.Approval) { a.ProjectID = other.ID },
		"not a uuid":        func(a *store.Approval) { a.ProjectID = "x" },
		"unrequested scope": func(a *store.Approval) { a.Scopes = []string{"memory:read", "workflows:write"} },
		"no scope":          func(a *store.Approval) { a.Scopes = nil },
		"unknown request":   func(a *store.Approval) { a.HandleHash = h("nope") },
		"request expired":   func(a *store.Approval) { a.Now = t0.Add(time.Minute) },
	} {
		a := base
		mut(&a)
		if _, err := tr.db.ApproveAuthRequest(ctx, a); err == nil {
			t.Errorf("%s: approved", name)
		}
	}
	var grants, codes int
	mustQuery(t, tr.db, `SELECT count(*) FROM oauth_grants`, &grants)
	mustQuery(t, tr.db, `SELECT count(*) FROM oauth_codes`, &codes)
	if grants != 0 || codes != 0 {
		t.Fatalf("refusals wrote %d grants, %d codes", grants, codes)
	}
	got, err := tr.db.ApproveAuthRequest(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	want := store.Answered{ClientID: c.ID, RedirectURI: "http://127.0.0.1:5/cb", ProjectID: tr.project.ID,
		Scopes: []string{"memory:read"}, GrantScopes: []string{"memory:read"}}
	if diff := cmp.Diff(want, got, cmpIgnoreGrantID); diff != "" {
		t.Errorf("Answered mismatch (-want +got):\n%s", diff)
	}
	if _, err := tr.db.ApproveAuthRequest(ctx, base); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("second answer = %v, want ErrNotFound", err)
	}
}

// TestAZ04GrantGrowsOnlyOnApproval: a later approval adds scopes to the
// same grant; the code carries only what that approval named.
func TestAZ04GrantGrowsOnlyOnApproval(t *testing.T) {
	t.Parallel()
	tr, c := oauthTree(t)
	a1 := approve(t, tr, c, "1", []string{"memory:read", "documents:read"}, []string{"memory:read"})
	a2 := approve(t, tr, c, "2", []string{"memory:read", "documents:read"}, []string{"documents:read"})
	if a1.GrantID != a2.GrantID {
		t.Errorf("second approval made a new grant")
	}
	if diff := cmp.Diff([]string{"documents:read", "memory:read"}, a2.GrantScopes); diff != "" {
		t.Errorf("grant scopes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"documents:read"}, a2.Scopes); diff != "" {
		t.Errorf("code scopes (-want +got):\n%s", diff)
	}
}

func TestDenyAuthRequest(t *testing.T) {
	t.Parallel()
	tr, c := oauthTree(t)
	ctx := t.Context()
	if err := tr.db.CreateAuthRequest(ctx, h("r"), store.AuthRequest{ClientID: c.ID, RedirectURI: "http://127.0.0.1/cb",
		CodeChallenge: "ch", Scopes: []string{"memory:read"}, Resource: "r", State: "s1", ExpiresAt: t0.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	got, err := tr.db.DenyAuthRequest(ctx, h("r"), tr.principal.ID, t0)
	if err != nil || got.RedirectURI != "http://127.0.0.1/cb" || got.State != "s1" || got.ClientID != c.ID {
		t.Fatalf("DenyAuthRequest = %+v, %v", got, err)
	}
	if _, err := tr.db.DenyAuthRequest(ctx, h("r"), tr.principal.ID, t0); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("second deny = %v, want ErrNotFound", err)
	}
}

// TestOA07CodeReplayRevokes: a code works once; its replay revokes the
// tokens it produced.
func TestOA07CodeReplayRevokes(t *testing.T) {
	t.Parallel()
	tr, c := oauthTree(t)
	approve(t, tr, c, "1", []string{"memory:read"}, []string{"memory:read"})
	iss, err := redeem(t, tr, c, "1", t0)
	if err != nil || !iss.Refresh || iss.ProjectID != tr.project.ID || iss.PrincipalID != tr.principal.ID {
		t.Fatalf("redeem = %+v, %v", iss, err)
	}
	if _, err := redeem(t, tr, c, "1", t0.Add(time.Second)); !errors.Is(err, store.ErrInvalidGrant) {
		t.Fatalf("replay = %v, want ErrInvalidGrant", err)
	}
	var live int
	mustQuery(t, tr.db, `SELECT count(*) FROM oauth_tokens WHERE revoked_at IS NULL`, &live)
	if live != 0 {
		t.Errorf("%d tokens live after replay, want 0", live)
	}
}

// TestOA06CodeDiesAfterFailedCheck pins the policy: a failed PKCE (or
// redirect) check consumes the code; the right verifier afterwards fails.
func TestOA06CodeDiesAfterFailedCheck(t *testing.T) {
	t.Parallel()
	tr, c := oauthTree(t)
	approve(t, tr, c, "1", []string{"memory:read"}, []string{"memory:read"})
	bad := errors.New("pkce mismatch")
	_, err := tr.db.RedeemCode(t.Context(), store.CodeRedemption{CodeHash: h("code1"), ClientID: c.ID, Now: t0,
		Check: func(store.CodeGrant) error { return bad }, Tokens: store.NewTokens{AccessHash: h("a")}})
	if !errors.Is(err, bad) {
		t.Fatalf("failed check = %v", err)
	}
	if _, err := redeem(t, tr, c, "1", t0); !errors.Is(err, store.ErrInvalidGrant) {
		t.Errorf("redeem after failed check = %v, want ErrInvalidGrant", err)
	}
}

// TestOA09CodeBindings: another client's redemption and an expired code fail.
func TestOA09CodeBindings(t *testing.T) {
	t.Parallel()
	tr, c := oauthTree(t)
	other, err := tr.db.RegisterClient(t.Context(), "B", []string{"https://b.example/cb"}, []string{"authorization_code"})
	if err != nil {
		t.Fatal(err)
	}
	approve(t, tr, c, "1", []string{"memory:read"}, []string{"memory:read"})
	if _, err := redeem(t, tr, other, "1", t0); !errors.Is(err, store.ErrInvalidGrant) {
		t.Errorf("other client = %v, want ErrInvalidGrant", err)
	}
	approve(t, tr, c, "2", []string{"memory:read"}, []string{"memory:read"})
	if _, err := redeem(t, tr, c, "2", t0.Add(10*time.Minute)); !errors.Is(err, store.ErrInvalidGrant) {
		t.Errorf("expired = %v, want ErrInvalidGrant", err)
	}
	approve(t, tr, c, "3", []string{"memory:read"}, []string{"memory:read"})
	if _, err := redeem(t, tr, c, "3", t0.Add(10*time.Minute-time.Second)); err != nil {
		t.Errorf("9m59s = %v, want success", err)
	}
}

// TestOA08ConcurrentRedemptions: 20 concurrent redemptions, one success.
func TestOA08ConcurrentRedemptions(t *testing.T) {
	t.Parallel()
	tr, c := oauthTree(t)
	approve(t, tr, c, "1", []string{"memory:read"}, []string{"memory:read"})
	var wg sync.WaitGroup
	errs := make([]error, 20)
	start := make(chan struct{})
	for i := range errs {
		wg.Go(func() {
			<-start
			_, errs[i] = tr.db.RedeemCode(t.Context(), store.CodeRedemption{CodeHash: h("code1"), ClientID: c.ID, Now: t0,
				Tokens: store.NewTokens{AccessHash: h(fmt.Sprint("a", i)), AccessTTL: time.Hour}})
		})
	}
	close(start)
	wg.Wait()
	ok := 0
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case !errors.Is(err, store.ErrInvalidGrant):
			t.Errorf("unexpected error %v", err)
		}
	}
	if ok != 1 {
		t.Errorf("%d successes, want 1", ok)
	}
	var families int
	mustQuery(t, tr.db, `SELECT count(DISTINCT family_id) FROM oauth_tokens`, &families)
	if families != 1 {
		t.Errorf("%d token families, want 1", families)
	}
}

var cmpIgnoreGrantID = cmpopts.IgnoreFields(store.Answered{}, "GrantID")

// TestOA07InvalidReplayRevokesNothing: a replay whose parameters fail the
// caller's check (say, a wrong PKCE verifier) is refused without revoking,
// so a leaked used code alone cannot end the legitimate session.
func TestOA07InvalidReplayRevokesNothing(t *testing.T) {
	t.Parallel()
	tr, c := oauthTree(t)
	approve(t, tr, c, "1", []string{"memory:read"}, []string{"memory:read"})
	if _, err := redeem(t, tr, c, "1", t0); err != nil {
		t.Fatal(err)
	}
	_, err := tr.db.RedeemCode(t.Context(), store.CodeRedemption{CodeHash: h("code1"), ClientID: c.ID, Now: t0,
		Check: func(store.CodeGrant) error { return errors.New("wrong verifier") }, Tokens: store.NewTokens{AccessHash: h("x")}})
	if !errors.Is(err, store.ErrInvalidGrant) {
		t.Fatalf("invalid replay = %v, want ErrInvalidGrant", err)
	}
	var live int
	mustQuery(t, tr.db, `SELECT count(*) FROM oauth_tokens WHERE revoked_at IS NULL`, &live)
	if live != 2 {
		t.Errorf("%d live tokens after an invalid replay, want 2", live)
	}
}
