package admin

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"heyaira/github"
	"heyaira/internal/secretfile"
	"heyaira/store"
)

// This file checks a new document source with GitHub before it is added, so
// that a path that does not exist at its commit is refused when the
// administrator types it, not later when an agent reads it. The check uses
// the App of serve's configuration (HEYAIRA_GITHUB_APP_ID and
// HEYAIRA_GITHUB_APP_PRIVATE_KEY_FILE); without it, the source is added and a
// note on stderr says that the path was not verified.

// githubHooks points the check at a fake GitHub. Only tests set it
// (export_test.go); the zero value is api.github.com.
type githubHooks struct {
	baseURL string
	http    *http.Client
	now     func() time.Time
}

var errSkipCheck = errors.New("the App is not configured")

// githubClient builds a client from the App configuration, or returns
// errSkipCheck when neither variable is set. A half or unusable
// configuration is an error: the administrator meant to check.
func (e *env) githubClient() (*github.Client, error) {
	appID := strings.TrimSpace(e.getenv("HEYAIRA_GITHUB_APP_ID"))
	keyFile := e.getenv("HEYAIRA_GITHUB_APP_PRIVATE_KEY_FILE")
	switch {
	case appID == "" && keyFile == "":
		return nil, errSkipCheck
	case appID == "" || keyFile == "":
		return nil, errors.New("set both HEYAIRA_GITHUB_APP_ID and HEYAIRA_GITHUB_APP_PRIVATE_KEY_FILE, or neither")
	}
	pemBytes, err := secretfile.Read(keyFile)
	if err != nil {
		return nil, fmt.Errorf("GitHub App key: %w", err)
	}
	key, err := github.ParseAppKey(pemBytes)
	if err != nil {
		return nil, fmt.Errorf("GitHub App key %s: %w", keyFile, err)
	}
	return github.NewClient(github.Config{BaseURL: e.gh.baseURL, HTTP: e.gh.http, Now: e.gh.now,
		AppID: appID, Key: key}), nil
}

// verifySource reads the new source's document through the App, at its
// commit or at the head of its branch. A source whose repository is not
// linked is left to the store, which refuses it with its own message.
//
// Without an App it returns a note for the caller to print once the source
// is added: a command that fails prints its one line of refusal, nothing more.
func (e *env) verifySource(ctx context.Context, db *store.DB, in store.NewDocumentSource) (note string, err error) {
	gh, err := e.githubClient()
	if errors.Is(err, errSkipCheck) {
		return fmt.Sprintf("%s: %s: note: %s was not checked with GitHub (HEYAIRA_GITHUB_APP_ID and "+
			"HEYAIRA_GITHUB_APP_PRIVATE_KEY_FILE are not set); if it does not exist, agents get provider_not_found\n",
			e.prog, e.cmd.Name, in.Path), nil
	}
	if err != nil {
		return "", fmt.Errorf("cannot check the path with GitHub: %w (or add --skip-github-check)", err)
	}
	repos, err := db.ListRepositories(ctx, in.ProjectID)
	if err != nil {
		return "", err
	}
	var b github.Binding
	for _, r := range repos {
		if r.RevokedAt == nil && strings.EqualFold(r.GitHubOwner, in.GitHubOwner) && strings.EqualFold(r.GitHubRepository, in.GitHubRepository) {
			b = github.Binding{Owner: r.GitHubOwner, Repo: r.GitHubRepository, InstallationID: r.GitHubInstallationID,
				Tenant: in.ProjectID}
			if r.GitHubRepositoryID != nil {
				b.RepositoryID = *r.GitHubRepositoryID
			}
		}
	}
	if b.InstallationID == 0 {
		return "", nil // not linked: AddDocumentSource says so
	}
	at, commit := "commit "+in.CommitSHA, in.CommitSHA
	if in.TrackingRef != "" {
		if commit, err = gh.ResolveBranch(ctx, b, in.TrackingRef); err != nil {
			return "", sourceCheckError(err, fmt.Sprintf("branch %s", in.TrackingRef), b, "--track")
		}
		at = fmt.Sprintf("the head of branch %s (commit %s)", in.TrackingRef, commit)
	}
	if _, err := gh.GetFile(ctx, b, in.Path, commit); err != nil {
		return "", sourceCheckError(err, fmt.Sprintf("%s at %s", in.Path, at), b, "--path")
	}
	return "", nil
}

// sourceCheckError says what GitHub's answer means for the new source.
func sourceCheckError(err error, what string, b github.Binding, flag string) error {
	const skip = "; or add --skip-github-check to allowlist it anyway"
	repo := fmt.Sprintf("%s/%s", b.Owner, b.Repo)
	switch {
	case errors.Is(err, github.ErrNotFound):
		return fmt.Errorf("GitHub has no %s in %s, or installation %d cannot see it: check %s%s",
			what, repo, b.InstallationID, flag, skip)
	case errors.Is(err, github.ErrNotFile):
		return fmt.Errorf("%s in %s is not a regular file (a directory, a symlink or a submodule)%s", what, repo, skip)
	case errors.Is(err, github.ErrTooLarge), errors.Is(err, github.ErrNotUTF8):
		return fmt.Errorf("%s in %s cannot be served: %v%s", what, repo, err, skip)
	}
	return fmt.Errorf("could not check %s in %s with GitHub: %v; retry%s", what, repo, err, skip)
}
