package authserver_test

import (
	"net/http"
	"testing"

	"heyaira/server/internal/servertest"
	"heyaira/store"
)

// TestLC08TokenFamiliesAreBounded: a client that authorizes the same grant
// again and again (a step-up, or one client_id on many devices, as with a
// Client ID Metadata Document) keeps store.MaxLiveFamilies live families:
// the least recently used beyond them are revoked, the others keep working,
// and list-grants shows exactly the live ones.
// Row LC-06 (docs/security-tests.md).
func TestLC08TokenFamiliesAreBounded(t *testing.T) {
	t.Parallel()
	e, _ := servertest.NewOAuth(t)
	tn := e.NewTenant("o", "r")
	c := e.Register("http://127.0.0.1/cb")
	const n = store.MaxLiveFamilies + 2
	var refresh []string
	for i := range n {
		if i == store.MaxLiveFamilies {
			// The first device refreshes before the sixth family starts: it
			// is now the most recently used, though the oldest.
			r := e.Refresh(c, refresh[0])
			if r.Status != http.StatusOK {
				t.Fatalf("refresh: %d %s", r.Status, r.Raw)
			}
			refresh[0] = servertest.Str(r.Body, "refresh_token")
		}
		r := e.Tokens(t, tn, c, "memory:read")
		refresh = append(refresh, servertest.Str(r.Body, "refresh_token"))
	}
	grants, err := e.DB.ListGrants(t.Context(), tn.Project)
	if err != nil || len(grants) != 1 {
		t.Fatalf("ListGrants: %v %v", grants, err)
	}
	if got := len(grants[0].Families); got != store.MaxLiveFamilies {
		t.Errorf("live families = %d, want %d", got, store.MaxLiveFamilies)
	}
	// Seven families: when the sixth and seventh started, 1 and then 2 were
	// the least recently used (0 had refreshed), so those two are revoked;
	// 0 and 3..6 work.
	for i, rt := range refresh {
		r := e.Refresh(c, rt)
		revoked := i == 1 || i == 2
		switch {
		case revoked && (r.Status != http.StatusBadRequest || r.Body["error"] != "invalid_grant"):
			t.Errorf("family %d: %d %s, want invalid_grant (evicted)", i, r.Status, r.Raw)
		case !revoked && r.Status != http.StatusOK:
			t.Errorf("family %d: %d %s, want it live", i, r.Status, r.Raw)
		}
	}
	var evicted int
	if err := e.DB.SQL().QueryRow(`SELECT count(*) FROM audit_events WHERE action = 'oauth_family.evict'`).Scan(&evicted); err != nil {
		t.Fatal(err)
	}
	if evicted != 2 {
		t.Errorf("oauth_family.evict rows = %d, want 2 (one per eviction)", evicted)
	}
}
