package admin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"heyaira/store"
)

// This file holds the account-source operations: the account-wide
// instruction documents (core and mode layers) that workflow dispatch reads
// from docs/agents/. They grant no standalone document access.

// accountSourcePrefix is the only folder account sources may name.
const accountSourcePrefix = "docs/agents/"

func runAddAccountSource(ctx context.Context, e *env, args []string) error {
	f := e.flags()
	account := f.String("account-id", "", "the account `id`")
	owner := f.String("github-owner", "", "the repository's GitHub `owner`")
	repo := f.String("github-repository", "", "the repository `name`, without the owner")
	inst := f.Int64("github-installation-id", 0, "the GitHub App installation `id` that can read the repository")
	layer := f.String("layer", "", "the catalog `layer`: core, mode:worker or mode:verifier")
	path := f.String("path", "", "the document's `path`, under docs/agents/")
	commit := f.String("commit-sha", "", "pin the document at this commit: `sha` of exactly 40 lowercase hex characters")
	track := f.String("track", "", "instead of a commit, track this `branch` (resolved at every workflow dispatch)")
	if err := f.parse(args); err != nil {
		return err
	}
	checks := []error{
		needUUID("account-id", *account), needOwner(*owner), needRepository(*repo),
		needPositive("github-installation-id", *inst),
		needOneOf("layer", *layer, "core", "mode:worker", "mode:verifier"),
		needPath(*path), needAgentsPath(*path), f.exactlyOne("track", "commit-sha"),
	}
	if f.isSet("commit-sha") {
		checks = append(checks, needCommitSHA(*commit))
	}
	if f.isSet("track") {
		checks = append(checks, needBranch(*track))
	}
	if err := f.check(checks...); err != nil {
		return err
	}
	db, err := e.open(ctx, false)
	if err != nil {
		return failed(e.cmd.Name, err)
	}
	s, err := db.AddAccountSource(ctx, store.NewAccountSource{AccountID: *account, GitHubOwner: *owner,
		GitHubRepository: *repo, GitHubInstallationID: *inst, Layer: *layer, Path: *path,
		CommitSHA: *commit, TrackingRef: *track})
	if err != nil {
		return failed(e.cmd.Name, err)
	}
	return f.output(s, func(w io.Writer) { fmt.Fprintln(w, s.ID) })
}

// needAgentsPath checks the docs/agents/ prefix. ValidatePath has already
// refused "." and ".." segments, so the prefix cannot be escaped.
func needAgentsPath(p string) error {
	if !strings.HasPrefix(p, accountSourcePrefix) || len(p) == len(accountSourcePrefix) {
		return errors.New("--path must name a document under " + accountSourcePrefix)
	}
	return nil
}

func runRevokeAccountSource(ctx context.Context, e *env, args []string) error {
	f, source, db, err := e.byID(ctx, args, "source-id", "the account source `id`")
	if err != nil {
		return err
	}
	s, err := db.RevokeAccountSource(ctx, source)
	if err != nil {
		return failed(e.cmd.Name, err)
	}
	return f.output(s, func(w io.Writer) {
		fmt.Fprintf(w, "revoked account source %s (%s %s/%s %s)\n", s.ID, s.Layer, s.GitHubOwner, s.GitHubRepository, s.Path)
	})
}

func runListAccountSources(ctx context.Context, e *env, args []string) error {
	f, account, db, err := e.byID(ctx, args, "account-id", "the account `id`")
	if err != nil {
		return err
	}
	sources, err := db.ListAccountSources(ctx, account)
	if err != nil {
		return failed(e.cmd.Name, err)
	}
	out := struct {
		AccountID string                `json:"account_id"`
		Sources   []store.AccountSource `json:"sources"`
	}{account, sources}
	return f.output(out, func(w io.Writer) {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "SOURCE ID\tLAYER\tREPOSITORY\tINSTALLATION\tPATH\tREF\tSTATUS")
		for _, s := range sources {
			fmt.Fprintf(tw, "%s\t%s\t%s/%s\t%d\t%s\t%s\t%s\n", s.ID, s.Layer, s.GitHubOwner, s.GitHubRepository,
				s.GitHubInstallationID, s.Path, ref(s.CommitSHA, s.TrackingRef), status(s.RevokedAt != nil, "revoked"))
		}
		tw.Flush()
	})
}
