package store_test

import (
	"testing"

	"heyaira/store"

	"github.com/google/go-cmp/cmp"
)

func TestRepositoryLinks(t *testing.T) {
	t.Parallel()
	tr := newTree(t)
	ctx := t.Context()
	in := store.NewRepository{ProjectID: tr.project.ID, GitHubOwner: "h8v6", GitHubRepository: "heyaira",
		GitHubInstallationID: 42, GitHubRepositoryID: 7}
	r, err := tr.db.LinkRepository(ctx, in)
	if err != nil {
		t.Fatalf("LinkRepository: %v", err)
	}
	want := store.Repository{ID: r.ID, ProjectID: tr.project.ID, GitHubOwner: "h8v6", GitHubRepository: "heyaira",
		GitHubInstallationID: 42, GitHubRepositoryID: ptr(int64(7))}
	if diff := cmp.Diff(want, r, cmpIgnoreTime); diff != "" {
		t.Errorf("LinkRepository (-want +got):\n%s", diff)
	}

	// GitHub names are case-insensitive: the same repository cannot be linked twice.
	in.GitHubOwner, in.GitHubRepository = "H8V6", "HEYAIRA"
	_, err = tr.db.LinkRepository(ctx, in)
	wantRefused(t, err, store.ErrConflict, "repository h8v6/heyaira is already linked to project "+tr.project.ID+
		" (repository id "+r.ID+")")

	un, err := tr.db.UnlinkRepository(ctx, tr.project.ID, "H8v6", "HeyAira")
	if err != nil || un.ID != r.ID || un.RevokedAt == nil {
		t.Fatalf("UnlinkRepository = %+v, %v; want %s revoked", un, err, r.ID)
	}
	_, err = tr.db.UnlinkRepository(ctx, tr.project.ID, "h8v6", "heyaira")
	wantRefused(t, err, store.ErrNotFound, "repository h8v6/heyaira is not linked to project "+tr.project.ID)

	// A new link is a new row; the old one stays, revoked.
	again, err := tr.db.LinkRepository(ctx, in)
	if err != nil || again.ID == r.ID {
		t.Fatalf("relink = %+v, %v; want a new row", again, err)
	}
	list, err := tr.db.ListRepositories(ctx, tr.project.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].ID != r.ID || list[0].RevokedAt == nil || list[1].ID != again.ID || list[1].RevokedAt != nil {
		t.Errorf("ListRepositories = %+v", list)
	}
	if n := auditRows(t, tr.db); n != 3+3 {
		t.Errorf("%d audit rows, want 6 (3 creations, link, unlink, link)", n)
	}
}
