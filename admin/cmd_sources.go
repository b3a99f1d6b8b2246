package admin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"heyaira/store"
)

// This file holds the document-source operations (docs/design.md §5): linking and
// unlinking a repository, and adding, revoking and listing the documents a
// project allowlists in it (docs/document-sources.md); then the account
// sources.

// Fragment limits of docs/design.md §5.
const (
	minFragmentLimit     = 1
	maxFragmentLimit     = 65536
	defaultFragmentLimit = maxFragmentLimit
)

func runLinkRepository(f *flags) action {
	project := f.id("project-id", "the project `id`")
	owner := f.str("github-owner", "the repository's GitHub `owner` (user or organization)", needOwner)
	repo := f.str("github-repository", "the repository `name`, without the owner", needRepository)
	inst := f.Int64("github-installation-id", 0, "the GitHub App installation `id` that can read the repository")
	repoID := f.Int64("github-repository-id", 0, "the repository's numeric GitHub `id` (optional; lets tokens be scoped by id)")
	f.need(func() error { return needPositive("github-installation-id", *inst) })
	f.need(func() error { return f.ifSet("github-repository-id", needPositive("github-repository-id", *repoID)) })
	return func(ctx context.Context, db *store.DB) error {
		r, err := db.LinkRepository(ctx, store.NewRepository{ProjectID: *project, GitHubOwner: *owner,
			GitHubRepository: *repo, GitHubInstallationID: *inst, GitHubRepositoryID: *repoID})
		return f.output(r, err, func(w io.Writer) { fmt.Fprintln(w, r.ID) })
	}
}

func runUnlinkRepository(f *flags) action {
	project := f.id("project-id", "the project `id`")
	owner := f.str("github-owner", "the repository's GitHub `owner`", needOwner)
	repo := f.str("github-repository", "the repository `name`, without the owner", needRepository)
	return func(ctx context.Context, db *store.DB) error {
		r, err := db.UnlinkRepository(ctx, *project, *owner, *repo)
		return f.output(r, err, func(w io.Writer) {
			fmt.Fprintf(w, "unlinked %s/%s from project %s; its document sources can no longer be read\n",
				r.GitHubOwner, r.GitHubRepository, r.ProjectID)
		})
	}
}

func runAddDocumentSource(f *flags) action {
	project := f.id("project-id", "the project `id`")
	owner := f.str("github-owner", "the GitHub `owner` of a repository linked to the project", needOwner)
	repo := f.str("github-repository", "the repository `name`, without the owner", needRepository)
	role := f.str("document-role", "the document's `role`: runtime, reference or instruction",
		oneOf("runtime", "reference", "instruction"))
	path := f.str("path", "the document's `path` in the repository (relative, '/'-separated)", needPath)
	f.exactlyOne("commit-sha", "track")
	commit := f.optional("commit-sha", "pin the document at this commit: `sha` of exactly 40 lowercase hex characters",
		needCommitSHA)
	track := f.optional("track", "instead of a commit, track this `branch` (role instruction only; resolved at workflow dispatch)",
		needBranch)
	profile := f.String("profile", "", "limit an instruction source to one catalog profile `name` (default: all profiles)")
	limit := f.Int("fragment-limit", defaultFragmentLimit, "the largest fragment a read returns, in `bytes` (1 to 65536)")
	skipCheck := f.Bool("skip-github-check", false, "add the source without reading it through the GitHub App first")
	f.need(func() error {
		switch {
		case f.set["track"] && *role != "instruction":
			return fmt.Errorf("--track is allowed only with --document-role instruction; pin a %s document with --commit-sha",
				*role)
		case f.set["profile"] && !profileRE.MatchString(*profile):
			return fmt.Errorf("--profile must match %s", profileRE)
		case f.set["profile"] && *role != "instruction":
			return fmt.Errorf("--profile is allowed only with --document-role instruction")
		case *limit < minFragmentLimit || *limit > maxFragmentLimit:
			return fmt.Errorf("--fragment-limit must be between %d and %d bytes", minFragmentLimit, maxFragmentLimit)
		}
		return nil
	})
	return func(ctx context.Context, db *store.DB) error {
		in := store.NewDocumentSource{ProjectID: *project, GitHubOwner: *owner,
			GitHubRepository: *repo, Role: *role, Path: *path, CommitSHA: *commit, TrackingRef: *track,
			Profile: *profile, FragmentLimit: *limit}
		var note string
		if !*skipCheck {
			var err error
			if note, err = f.e.verifySource(ctx, db, in); err != nil {
				return err
			}
		}
		s, err := db.AddDocumentSource(ctx, in)
		if err == nil {
			io.WriteString(f.e.stderr, note)
		}
		return f.output(s, err, func(w io.Writer) { fmt.Fprintln(w, s.ID) })
	}
}

var runRevokeDocumentSource = byID("source-id", "the document source `id`", (*store.DB).RevokeDocumentSource,
	func(w io.Writer, s store.DocumentSource) {
		fmt.Fprintf(w, "revoked document source %s (%s/%s %s)\n", s.ID, s.GitHubOwner, s.GitHubRepository, s.Path)
	})

func runListDocumentSources(f *flags) action {
	project := f.id("project-id", "the project `id`")
	return func(ctx context.Context, db *store.DB) error {
		repos, err := db.ListRepositories(ctx, *project)
		if err != nil {
			return err
		}
		sources, err := db.ListDocumentSources(ctx, *project)
		out := struct {
			ProjectID    string                 `json:"project_id"`
			Repositories []store.Repository     `json:"repositories"`
			Sources      []store.DocumentSource `json:"sources"`
		}{*project, repos, sources}
		return f.output(out, err, func(w io.Writer) {
			table(w, "REPOSITORY ID\tREPOSITORY\tINSTALLATION\tSTATUS", repos, func(r store.Repository) string {
				return fmt.Sprintf("%s\t%s/%s\t%d\t%s", r.ID, r.GitHubOwner, r.GitHubRepository,
					r.GitHubInstallationID, status(r.RevokedAt != nil, "unlinked"))
			})
			fmt.Fprintln(w)
			table(w, "SOURCE ID\tREPOSITORY\tROLE\tPATH\tREF\tPROFILE\tFRAGMENT LIMIT\tSTATUS", sources,
				func(s store.DocumentSource) string {
					st := status(s.RevokedAt != nil, "revoked")
					if s.RevokedAt == nil && s.RepositoryRevokedAt != nil {
						st = "repository unlinked"
					}
					return fmt.Sprintf("%s\t%s/%s\t%s\t%s\t%s\t%s\t%d\t%s", s.ID, s.GitHubOwner, s.GitHubRepository,
						s.Role, s.Path, ref(s.CommitSHA, s.TrackingRef), orDash(s.Profile), s.FragmentLimit, st)
				})
		})
	}
}

// Account sources are the account-wide instruction documents (core and mode
// layers) that workflow dispatch reads from docs/agents/. They grant no
// standalone document access.

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
