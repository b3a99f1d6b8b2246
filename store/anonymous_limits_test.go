package store_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"heyaira/store"
)

// Row BT-34: a principal has at most store.MaxPendingRequests pending
// authorization requests. 30 concurrent requests store exactly 20; the rest
// are a *QuotaError ("pending_requests") and store nothing; answered and
// expired requests do not count, and another principal is not affected.
func TestBT34PendingRequestBound(t *testing.T) {
	t.Parallel()
	tr, c := oauthTree(t)
	ctx := t.Context()
	other, err := tr.db.CreatePrincipal(ctx, tr.account.ID, "Bob")
	if err != nil {
		t.Fatal(err)
	}
	req := func(name, principal string, expires time.Time) error {
		return tr.db.CreateAuthRequest(ctx, h(name), store.AuthRequest{ClientID: c.ID, RedirectURI: "http://127.0.0.1/cb",
			CodeChallenge: "ch", Scopes: []string{"memory:read"}, Resource: "http://x/mcp", ExpiresAt: expires,
			PrincipalID: principal, Now: t0})
	}
	// Expired ones do not count.
	for i := range 5 {
		if err := req(fmt.Sprintf("old%d", i), tr.principal.ID, t0.Add(-time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok := 0
	for i := range 30 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := req(fmt.Sprintf("r%d", i), tr.principal.ID, t0.Add(10*time.Minute))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				ok++
			case quotaOf(err) != "pending_requests":
				t.Errorf("request %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	if ok != store.MaxPendingRequests {
		t.Errorf("%d concurrent requests stored, want %d", ok, store.MaxPendingRequests)
	}
	if err := req("bob", other.ID, t0.Add(10*time.Minute)); err != nil {
		t.Errorf("another principal's request: %v", err)
	}
	// Answering one makes room for one.
	var answered bool
	for i := range 30 {
		if _, err := tr.db.DenyAuthRequest(ctx, h(fmt.Sprintf("r%d", i)), tr.principal.ID, t0); err == nil {
			answered = true
			break
		}
	}
	if !answered {
		t.Fatal("no stored request could be denied")
	}
	if err := req("after", tr.principal.ID, t0.Add(10*time.Minute)); err != nil {
		t.Errorf("a request after one was answered: %v", err)
	}
	if err := req("over", tr.principal.ID, t0.Add(10*time.Minute)); quotaOf(err) != "pending_requests" {
		t.Errorf("a request over the bound again: %v", err)
	}
}

// Row BT-35: registered clients never authorized are purged a day after
// registration: a client without grant and without any authorization
// request goes; one with a grant, one with a request, and one registered
// within the day stay.
func TestBT35PurgeUnusedClients(t *testing.T) {
	t.Parallel()
	tr, granted := oauthTree(t)
	ctx := t.Context()
	approve(t, tr, granted, "g", []string{"memory:read"}, []string{"memory:read"})
	register := func(name string) store.Client {
		c, err := tr.db.RegisterClient(ctx, name, []string{"http://127.0.0.1/cb"}, []string{"authorization_code"})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	bare, requested, fresh := register("bare"), register("requested"), register("fresh")
	if err := tr.db.CreateAuthRequest(ctx, h("pending"), store.AuthRequest{ClientID: requested.ID, RedirectURI: "http://127.0.0.1/cb",
		CodeChallenge: "ch", Scopes: []string{"memory:read"}, Resource: "http://x/mcp", ExpiresAt: t0}); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.db.SQL().ExecContext(ctx, `UPDATE oauth_clients SET created_at = now() - interval '2 days' WHERE id <> $1`, fresh.ID); err != nil {
		t.Fatal(err)
	}
	n, err := tr.db.PurgeUnusedClients(ctx, time.Now().Add(-24*time.Hour))
	if err != nil || n != 1 {
		t.Fatalf("purged %d, %v; want 1", n, err)
	}
	for _, c := range []struct {
		id   string
		kept bool
	}{{bare.ID, false}, {granted.ID, true}, {requested.ID, true}, {fresh.ID, true}} {
		if _, err := tr.db.Client(ctx, c.id); (err == nil) != c.kept {
			t.Errorf("client %s: %v, kept should be %v", c.id, err, c.kept)
		}
	}
}
