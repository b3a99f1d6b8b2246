package store_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"heyaira/store"

	"github.com/google/go-cmp/cmp"
)

const commitSHA = "0123456789abcdef0123456789abcdef01234567"

func ptr[T any](v T) *T { return &v }

func TestDocumentSources(t *testing.T) {
	t.Parallel()
	tr := newTree(t)
	ctx := t.Context()
	repo, err := tr.db.LinkRepository(ctx, store.NewRepository{ProjectID: tr.project.ID, GitHubOwner: "h8v6",
		GitHubRepository: "heyaira", GitHubInstallationID: 42})
	if err != nil {
		t.Fatal(err)
	}
	pinned := store.NewDocumentSource{ProjectID: tr.project.ID, GitHubOwner: "h8v6", GitHubRepository: "heyaira",
		Role: "runtime", Path: "docs/CONTINUITY_PROTOCOL.md", CommitSHA: commitSHA, FragmentLimit: 65536}
	s, err := tr.db.AddDocumentSource(ctx, pinned)
	if err != nil {
		t.Fatalf("AddDocumentSource: %v", err)
	}
	want := store.DocumentSource{ID: s.ID, ProjectID: tr.project.ID, RepositoryID: repo.ID, GitHubOwner: "h8v6",
		GitHubRepository: "heyaira", GitHubInstallationID: 42, Role: "runtime", Path: "docs/CONTINUITY_PROTOCOL.md",
		CommitSHA: ptr(commitSHA), FragmentLimit: 65536}
	if diff := cmp.Diff(want, s, cmpIgnoreTime); diff != "" {
		t.Errorf("AddDocumentSource (-want +got):\n%s", diff)
	}
	tracked, err := tr.db.AddDocumentSource(ctx, store.NewDocumentSource{ProjectID: tr.project.ID, GitHubOwner: "H8V6",
		GitHubRepository: "heyaira", Role: "instruction", Path: "docs/agents/w.md", TrackingRef: "main",
		Profile: "writer", FragmentLimit: 100})
	if err != nil {
		t.Fatalf("AddDocumentSource tracking: %v", err)
	}
	if tracked.CommitSHA != nil || *tracked.TrackingRef != "main" || *tracked.Profile != "writer" || tracked.FragmentLimit != 100 {
		t.Errorf("tracking source = %+v", tracked)
	}

	before := auditRows(t, tr.db)
	other := pinned
	other.GitHubRepository = "other"
	_, err = tr.db.AddDocumentSource(ctx, other)
	wantRefused(t, err, store.ErrNotFound, notLinked("other", tr.project.ID))
	other = pinned
	other.ProjectID = missingID
	_, err = tr.db.AddDocumentSource(ctx, other)
	wantRefused(t, err, store.ErrNotFound, "project "+missingID+" not found")
	_, err = tr.db.RevokeDocumentSource(ctx, missingID)
	wantRefused(t, err, store.ErrNotFound, "document source "+missingID+" not found")
	if n := auditRows(t, tr.db); n != before {
		t.Errorf("refusals wrote %d audit rows", n-before)
	}

	revoked, err := tr.db.RevokeDocumentSource(ctx, tracked.ID)
	if err != nil || revoked.RevokedAt == nil {
		t.Fatalf("RevokeDocumentSource = %+v, %v", revoked, err)
	}
	_, err = tr.db.RevokeDocumentSource(ctx, tracked.ID)
	wantRefused(t, err, store.ErrConflict, "document source "+tracked.ID+" is already revoked")

	if _, err := tr.db.UnlinkRepository(ctx, tr.project.ID, "h8v6", "heyaira"); err != nil {
		t.Fatal(err)
	}
	_, err = tr.db.AddDocumentSource(ctx, pinned)
	wantRefused(t, err, store.ErrNotFound, notLinked("heyaira", tr.project.ID))
	list, err := tr.db.ListDocumentSources(ctx, tr.project.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].ID != s.ID || list[0].RepositoryRevokedAt == nil || list[0].RevokedAt != nil ||
		list[1].ID != tracked.ID || list[1].RevokedAt == nil {
		t.Errorf("ListDocumentSources after unlink = %+v", list)
	}
}

// TestAddSourceRacesUnlink runs an add and an unlink of the same link at once:
// they serialise (the add holds the link FOR SHARE), so either the add comes
// first and its source is then listed as of an unlinked repository, or it
// comes second and is refused. Neither deadlocks nor fails otherwise.
func TestAddSourceRacesUnlink(t *testing.T) {
	t.Parallel()
	tr := newTree(t)
	ctx := t.Context()
	for range 5 {
		if _, err := tr.db.LinkRepository(ctx, store.NewRepository{ProjectID: tr.project.ID, GitHubOwner: "h8v6",
			GitHubRepository: "heyaira", GitHubInstallationID: 42}); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var addErr, unlinkErr error
		wg.Add(2)
		go func() {
			defer wg.Done()
			_, addErr = tr.db.AddDocumentSource(ctx, store.NewDocumentSource{ProjectID: tr.project.ID,
				GitHubOwner: "h8v6", GitHubRepository: "heyaira", Role: "runtime", Path: "a.md",
				CommitSHA: commitSHA, FragmentLimit: 1})
		}()
		go func() {
			defer wg.Done()
			_, unlinkErr = tr.db.UnlinkRepository(ctx, tr.project.ID, "h8v6", "heyaira")
		}()
		wg.Wait()
		if unlinkErr != nil {
			t.Fatalf("unlink: %v", unlinkErr)
		}
		if addErr != nil {
			wantRefused(t, addErr, store.ErrNotFound, notLinked("heyaira", tr.project.ID))
		}
	}
	list, err := tr.db.ListDocumentSources(ctx, tr.project.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range list {
		if s.RepositoryRevokedAt == nil {
			t.Errorf("source %s is on a link that is still active", s.ID)
		}
	}
}

// notLinked is the refusal for a repository of owner h8v6 that is not
// linked to the project: it names the command that links it.
func notLinked(repo, project string) string {
	return "repository h8v6/" + repo + " is not linked to project " + project + ": link it first with " +
		"heyaira-admin link-repository --project-id " + project + " --github-owner h8v6 --github-repository " + repo +
		" --github-installation-id I"
}

// Concurrent adds of one document, and concurrent links of one repository,
// leave exactly one and refuse the rest with the usual refusal. Before, the
// look for a duplicate ran under shared locks only: in 27 of 30 rounds of
// eight concurrent adds more than one succeeded, and a second concurrent
// link failed with the driver's unique-index error instead of "already
// linked".
func TestConcurrentAllowlistChangesKeepOne(t *testing.T) {
	t.Parallel()
	tr := newTree(t)
	ctx := t.Context()
	const n = 8
	race := func(f func() error) []error {
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { errs[i] = f() })
		}
		wg.Wait()
		return errs
	}
	one := func(what string, errs []error, kind error) {
		t.Helper()
		ok := 0
		for _, err := range errs {
			switch {
			case err == nil:
				ok++
			case !errors.Is(err, kind) || !errors.As(err, new(*store.RefusedError)):
				t.Errorf("%s: %v, want a refusal of kind %v", what, err, kind)
			}
		}
		if ok != 1 {
			t.Errorf("%s: %d of %d concurrent calls succeeded, want 1", what, ok, n)
		}
	}
	one("link-repository", race(func() error {
		_, err := tr.db.LinkRepository(ctx, store.NewRepository{ProjectID: tr.project.ID, GitHubOwner: "h8v6",
			GitHubRepository: "heyaira", GitHubInstallationID: 42})
		return err
	}), store.ErrConflict)
	for round := range 5 {
		path := fmt.Sprintf("r%d.md", round)
		one("add-document-source "+path, race(func() error {
			_, err := tr.db.AddDocumentSource(ctx, store.NewDocumentSource{ProjectID: tr.project.ID,
				GitHubOwner: "h8v6", GitHubRepository: "heyaira", Role: "runtime", Path: path,
				CommitSHA: commitSHA, FragmentLimit: 1})
			return err
		}), store.ErrConflict)
	}
}
