package admin

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	"heyaira/store"
)

// This file holds the document-source operations (docs/design.md §5): linking and
// unlinking a repository, and adding, revoking and listing the documents a
// project allowlists in it (docs/document-sources.md).

// Fragment limits of docs/design.md §5.
const (
	minFragmentLimit     = 1
	maxFragmentLimit     = 65536
	defaultFragmentLimit = maxFragmentLimit
)

func runLinkRepository(ctx context.Context, e *env, args []string) error {
	f := e.flags()
	project := f.String("project-id", "", "the project `id`")
	owner := f.String("github-owner", "", "the repository's GitHub `owner` (user or organization)")
	repo := f.String("github-repository", "", "the repository `name`, without the owner")
	inst := f.Int64("github-installation-id", 0, "the GitHub App installation `id` that can read the repository")
	repoID := f.Int64("github-repository-id", 0, "the repository's numeric GitHub `id` (optional; lets tokens be scoped by id)")
	if err := f.parse(args); err != nil {
		return err
	}
	var repoIDErr error
	if f.isSet("github-repository-id") {
		repoIDErr = needPositive("github-repository-id", *repoID)
	}
	if err := f.check(needUUID("project-id", *project), needOwner(*owner), needRepository(*repo),
		needPositive("github-installation-id", *inst), repoIDErr); err != nil {
		return err
	}
	db, err := e.open(ctx, false)
	if err != nil {
		return failed(e.cmd.Name, err)
	}
	r, err := db.LinkRepository(ctx, store.NewRepository{ProjectID: *project, GitHubOwner: *owner,
		GitHubRepository: *repo, GitHubInstallationID: *inst, GitHubRepositoryID: *repoID})
	if err != nil {
		return failed(e.cmd.Name, err)
	}
	return f.output(r, func(w io.Writer) { fmt.Fprintln(w, r.ID) })
}

func runUnlinkRepository(ctx context.Context, e *env, args []string) error {
	f := e.flags()
	project := f.String("project-id", "", "the project `id`")
	owner := f.String("github-owner", "", "the repository's GitHub `owner`")
	repo := f.String("github-repository", "", "the repository `name`, without the owner")
	if err := f.parse(args); err != nil {
		return err
	}
	if err := f.check(needUUID("project-id", *project), needOwner(*owner), needRepository(*repo)); err != nil {
		return err
	}
	db, err := e.open(ctx, false)
	if err != nil {
		return failed(e.cmd.Name, err)
	}
	r, err := db.UnlinkRepository(ctx, *project, *owner, *repo)
	if err != nil {
		return failed(e.cmd.Name, err)
	}
	return f.output(r, func(w io.Writer) {
		fmt.Fprintf(w, "unlinked %s/%s from project %s; its document sources can no longer be read\n",
			r.GitHubOwner, r.GitHubRepository, r.ProjectID)
	})
}

func runAddDocumentSource(ctx context.Context, e *env, args []string) error {
	f := e.flags()
	project := f.String("project-id", "", "the project `id`")
	owner := f.String("github-owner", "", "the GitHub `owner` of a repository linked to the project")
	repo := f.String("github-repository", "", "the repository `name`, without the owner")
	role := f.String("document-role", "", "the document's `role`: runtime, reference or instruction")
	path := f.String("path", "", "the document's `path` in the repository (relative, '/'-separated)")
	commit := f.String("commit-sha", "", "pin the document at this commit: `sha` of exactly 40 lowercase hex characters")
	track := f.String("track", "", "instead of a commit, track this `branch` (role instruction only; resolved at workflow dispatch)")
	profile := f.String("profile", "", "limit an instruction source to one catalog profile `name` (default: all profiles)")
	limit := f.Int("fragment-limit", defaultFragmentLimit, "the largest fragment a read returns, in `bytes` (1 to 65536)")
	skipCheck := f.Bool("skip-github-check", false, "add the source without reading it through the GitHub App first")
	if err := f.parse(args); err != nil {
		return err
	}
	checks := []error{
		needUUID("project-id", *project), needOwner(*owner), needRepository(*repo),
		needOneOf("document-role", *role, "runtime", "reference", "instruction"),
		needPath(*path), f.exactlyOne("commit-sha", "track"),
	}
	if f.isSet("commit-sha") {
		checks = append(checks, needCommitSHA(*commit))
	}
	if f.isSet("track") {
		checks = append(checks, needBranch(*track))
		if *role != "instruction" {
			checks = append(checks, fmt.Errorf("--track is allowed only with --document-role instruction; pin a %s document with --commit-sha", *role))
		}
	}
	if f.isSet("profile") {
		if !profileRE.MatchString(*profile) {
			checks = append(checks, fmt.Errorf("--profile must match %s", profileRE))
		} else if *role != "instruction" {
			checks = append(checks, fmt.Errorf("--profile is allowed only with --document-role instruction"))
		}
	}
	if *limit < minFragmentLimit || *limit > maxFragmentLimit {
		checks = append(checks, fmt.Errorf("--fragment-limit must be between %d and %d bytes", minFragmentLimit, maxFragmentLimit))
	}
	if err := f.check(checks...); err != nil {
		return err
	}
	db, err := e.open(ctx, false)
	if err != nil {
		return failed(e.cmd.Name, err)
	}
	in := store.NewDocumentSource{ProjectID: *project, GitHubOwner: *owner,
		GitHubRepository: *repo, Role: *role, Path: *path, CommitSHA: *commit, TrackingRef: *track,
		Profile: *profile, FragmentLimit: *limit}
	if !*skipCheck {
		if err := e.verifySource(ctx, db, in); err != nil {
			return failed(e.cmd.Name, err)
		}
	}
	s, err := db.AddDocumentSource(ctx, in)
	if err != nil {
		return failed(e.cmd.Name, err)
	}
	return f.output(s, func(w io.Writer) { fmt.Fprintln(w, s.ID) })
}

func runRevokeDocumentSource(ctx context.Context, e *env, args []string) error {
	f, source, db, err := e.byID(ctx, args, "source-id", "the document source `id`")
	if err != nil {
		return err
	}
	s, err := db.RevokeDocumentSource(ctx, source)
	if err != nil {
		return failed(e.cmd.Name, err)
	}
	return f.output(s, func(w io.Writer) {
		fmt.Fprintf(w, "revoked document source %s (%s/%s %s)\n", s.ID, s.GitHubOwner, s.GitHubRepository, s.Path)
	})
}

func runListDocumentSources(ctx context.Context, e *env, args []string) error {
	f, project, db, err := e.byID(ctx, args, "project-id", "the project `id`")
	if err != nil {
		return err
	}
	repos, err := db.ListRepositories(ctx, project)
	if err != nil {
		return failed(e.cmd.Name, err)
	}
	sources, err := db.ListDocumentSources(ctx, project)
	if err != nil {
		return failed(e.cmd.Name, err)
	}
	out := struct {
		ProjectID    string                 `json:"project_id"`
		Repositories []store.Repository     `json:"repositories"`
		Sources      []store.DocumentSource `json:"sources"`
	}{project, repos, sources}
	return f.output(out, func(w io.Writer) {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "REPOSITORY ID\tREPOSITORY\tINSTALLATION\tSTATUS")
		for _, r := range repos {
			fmt.Fprintf(tw, "%s\t%s/%s\t%d\t%s\n", r.ID, r.GitHubOwner, r.GitHubRepository,
				r.GitHubInstallationID, status(r.RevokedAt != nil, "unlinked"))
		}
		fmt.Fprintln(tw)
		fmt.Fprintln(tw, "SOURCE ID\tREPOSITORY\tROLE\tPATH\tREF\tPROFILE\tFRAGMENT LIMIT\tSTATUS")
		for _, s := range sources {
			st := status(s.RevokedAt != nil, "revoked")
			if s.RevokedAt == nil && s.RepositoryRevokedAt != nil {
				st = "repository unlinked"
			}
			fmt.Fprintf(tw, "%s\t%s/%s\t%s\t%s\t%s\t%s\t%d\t%s\n", s.ID, s.GitHubOwner, s.GitHubRepository,
				s.Role, s.Path, ref(s.CommitSHA, s.TrackingRef), orDash(s.Profile), s.FragmentLimit, st)
		}
		tw.Flush()
	})
}

// ref describes a source's pin for text output: the commit, or "track:<branch>".
func ref(commit, tracking *string) string {
	if commit != nil {
		return *commit
	}
	if tracking != nil {
		return "track:" + *tracking
	}
	return "-"
}

func orDash(s *string) string {
	if s == nil {
		return "-"
	}
	return *s
}

func status(revoked bool, word string) string {
	if revoked {
		return word
	}
	return "active"
}
