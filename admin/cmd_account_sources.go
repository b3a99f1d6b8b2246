package admin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"heyaira/store"
)

// This file holds the account-source operations: the account-wide
// instruction documents (core and mode layers) that workflow dispatch reads
// from docs/agents/. They grant no standalone document access.

// accountSourcePrefix is the only folder account sources may name.
const accountSourcePrefix = "docs/agents/"

func runAddAccountSource(f *flags) action {
	account := f.id("account-id", "the account `id`")
	owner := f.str("github-owner", "the repository's GitHub `owner`", needOwner)
	repo := f.str("github-repository", "the repository `name`, without the owner", needRepository)
	inst := f.Int64("github-installation-id", 0, "the GitHub App installation `id` that can read the repository")
	f.need(func() error { return needPositive("github-installation-id", *inst) })
	layer := f.str("layer", "the catalog `layer`: core, mode:worker or mode:verifier",
		oneOf("core", "mode:worker", "mode:verifier"))
	path := f.str("path", "the document's `path`, under docs/agents/", needPath)
	f.need(func() error { return needAgentsPath(*path) })
	f.exactlyOne("track", "commit-sha")
	commit := f.optional("commit-sha", "pin the document at this commit: `sha` of exactly 40 lowercase hex characters",
		needCommitSHA)
	track := f.optional("track", "instead of a commit, track this `branch` (resolved at every workflow dispatch)", needBranch)
	return func(ctx context.Context, db *store.DB) error {
		s, err := db.AddAccountSource(ctx, store.NewAccountSource{AccountID: *account, GitHubOwner: *owner,
			GitHubRepository: *repo, GitHubInstallationID: *inst, Layer: *layer, Path: *path,
			CommitSHA: *commit, TrackingRef: *track})
		return f.output(s, err, func(w io.Writer) { fmt.Fprintln(w, s.ID) })
	}
}

// needAgentsPath checks the docs/agents/ prefix. ValidatePath has already
// refused "." and ".." segments, so the prefix cannot be escaped.
func needAgentsPath(p string) error {
	if !strings.HasPrefix(p, accountSourcePrefix) || len(p) == len(accountSourcePrefix) {
		return errors.New("--path must name a document under " + accountSourcePrefix)
	}
	return nil
}

var runRevokeAccountSource = byID("source-id", "the account source `id`", (*store.DB).RevokeAccountSource,
	func(w io.Writer, s store.AccountSource) {
		fmt.Fprintf(w, "revoked account source %s (%s %s/%s %s)\n", s.ID, s.Layer, s.GitHubOwner, s.GitHubRepository, s.Path)
	})

func runListAccountSources(f *flags) action {
	account := f.id("account-id", "the account `id`")
	return func(ctx context.Context, db *store.DB) error {
		sources, err := db.ListAccountSources(ctx, *account)
		out := struct {
			AccountID string                `json:"account_id"`
			Sources   []store.AccountSource `json:"sources"`
		}{*account, sources}
		return f.output(out, err, func(w io.Writer) {
			table(w, "SOURCE ID\tLAYER\tREPOSITORY\tINSTALLATION\tPATH\tREF\tSTATUS", sources, func(s store.AccountSource) string {
				return fmt.Sprintf("%s\t%s\t%s/%s\t%d\t%s\t%s\t%s", s.ID, s.Layer, s.GitHubOwner, s.GitHubRepository,
					s.GitHubInstallationID, s.Path, ref(s.CommitSHA, s.TrackingRef), status(s.RevokedAt != nil, "revoked"))
			})
		})
	}
}
