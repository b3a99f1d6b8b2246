package store_test

import (
	"testing"

	"heyaira/store"

	"github.com/google/go-cmp/cmp"
)

func TestAccountSources(t *testing.T) {
	t.Parallel()
	tr := newTree(t)
	ctx := t.Context()
	in := store.NewAccountSource{AccountID: tr.account.ID, GitHubOwner: "h8v6", GitHubRepository: "agents",
		GitHubInstallationID: 9, Layer: "mode:verifier", Path: "docs/agents/verifier.md", TrackingRef: "main"}
	s, err := tr.db.AddAccountSource(ctx, in)
	if err != nil {
		t.Fatalf("AddAccountSource: %v", err)
	}
	want := store.AccountSource{ID: s.ID, AccountID: tr.account.ID, GitHubOwner: "h8v6", GitHubRepository: "agents",
		GitHubInstallationID: 9, Layer: "mode:verifier", Path: "docs/agents/verifier.md", TrackingRef: ptr("main")}
	if diff := cmp.Diff(want, s, cmpIgnoreTime); diff != "" {
		t.Errorf("AddAccountSource (-want +got):\n%s", diff)
	}
	in.AccountID = missingID
	_, err = tr.db.AddAccountSource(ctx, in)
	wantRefused(t, err, store.ErrNotFound, "account "+missingID+" not found")

	r, err := tr.db.RevokeAccountSource(ctx, s.ID)
	if err != nil || r.RevokedAt == nil {
		t.Fatalf("RevokeAccountSource = %+v, %v", r, err)
	}
	_, err = tr.db.RevokeAccountSource(ctx, s.ID)
	wantRefused(t, err, store.ErrConflict, "account source "+s.ID+" is already revoked")
	list, err := tr.db.ListAccountSources(ctx, tr.account.ID)
	if err != nil {
		t.Fatal(err)
	}
	want.RevokedAt = r.RevokedAt
	if diff := cmp.Diff([]store.AccountSource{want}, list, cmpIgnoreTime); diff != "" {
		t.Errorf("ListAccountSources (-want +got):\n%s", diff)
	}
	if n := auditRows(t, tr.db); n != 3+2 {
		t.Errorf("%d audit rows, want 5", n)
	}
}
