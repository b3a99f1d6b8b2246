package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"log/slog"
	"time"

	"heyaira/cursor"
	"heyaira/github"
	"heyaira/store"
)

const (
	maxFileBytes   = 1 << 20 // the provider refuses larger documents
	cursorLifetime = 15 * time.Minute
	cursorKindDoc  = "document"
)

// documentTools reads allowlisted GitHub documents. The model names only a
// source_id: repository, path and commit always come from the project's
// allowlist, never from the model.
type documentTools struct {
	logger  *slog.Logger
	st      *store.DB
	gh      *github.Client
	cursors *cursor.Codec
	flights *flightCap
	now     func() time.Time
}

func (d *documentTools) tools() []*tool {
	return []*tool{
		{
			name:  "runtime_bootstrap_get",
			title: "Get runtime bootstrap",
			description: "List the project's active allowlisted documents (source_id, repository, role, path, " +
				"pinned commit or tracking branch, limits). Fails with runtime_unconfigured when no runtime source exists.",
			scope:    "documents:read",
			readOnly: true,
			toolArgs: typed(d.bootstrap),
		},
		{
			name:  "git_document_get",
			title: "Read an allowlisted document",
			description: "Read one UTF-8 fragment (at most the source's fragment limit, ≤ 64 KB) of an allowlisted " +
				"GitHub document at its pinned commit, with SHA-256 of the whole file and of the fragment. " +
				"Pass next_cursor back as cursor to continue; it is absent on the last fragment.",
			scope:    "documents:read",
			readOnly: true,
			toolArgs: typedSource(d.get),
		},
	}
}

type sourceView struct {
	SourceID         string       `json:"source_id"`
	GitHubOwner      string       `json:"github_owner"`
	GitHubRepository string       `json:"github_repository"`
	Role             string       `json:"role"`
	Path             string       `json:"path"`
	CommitSHA        *string      `json:"commit_sha"`
	TrackingRef      *string      `json:"tracking_ref"`
	Limits           sourceLimits `json:"limits"`
}

type sourceLimits struct {
	MaxFileBytes     int `json:"max_file_bytes"`
	MaxFragmentBytes int `json:"max_fragment_bytes"`
}

func (d *documentTools) bootstrap(ctx context.Context, p principal, _ *noArgs) (any, error) {
	sources, err := d.st.ActiveSources(ctx, p.auth.ProjectID)
	if err != nil {
		return nil, err
	}
	views := make([]sourceView, 0, len(sources))
	runtime := false
	for _, s := range sources {
		runtime = runtime || s.Role == "runtime"
		views = append(views, sourceView{
			SourceID: s.ID, GitHubOwner: s.GitHubOwner, GitHubRepository: s.GitHubRepository,
			Role: s.Role, Path: s.Path, CommitSHA: s.CommitSHA, TrackingRef: s.TrackingRef,
			Limits: sourceLimits{MaxFileBytes: maxFileBytes, MaxFragmentBytes: s.FragmentLimit},
		})
	}
	if !runtime {
		return nil, newCoded("runtime_unconfigured", "the project has no active runtime document source: an administrator "+
			"adds one with heyaira-admin add-document-source --project-id "+p.auth.ProjectID+
			" --document-role runtime --github-owner O --github-repository R --path PATH --commit-sha SHA")
	}
	return map[string]any{"project_id": p.auth.ProjectID, "sources": views}, nil
}

type documentResult struct {
	SourceID         string        `json:"source_id"`
	GitHubOwner      string        `json:"github_owner"`
	GitHubRepository string        `json:"github_repository"`
	Path             string        `json:"path"`
	CommitSHA        string        `json:"commit_sha"`
	Content          string        `json:"content"`
	Range            documentRange `json:"range"`
	SHA256           string        `json:"sha256"`
	FragmentSHA256   string        `json:"fragment_sha256"`
	NextCursor       string        `json:"next_cursor,omitempty"`
}

type documentRange struct {
	StartByte  int `json:"start_byte"`
	EndByte    int `json:"end_byte"`
	TotalBytes int `json:"total_bytes"`
}

var errSourceNotFound = newCoded("source_not_found", "no such document source in this project")

type documentGetArgs struct {
	SourceID  *string `json:"source_id" arg:"uuid,required"`
	StartByte *int64  `json:"start_byte" arg:"startByte"`
	MaxBytes  *int64  `json:"max_bytes" arg:"maxBytes"`
	Cursor    *string `json:"cursor" arg:"cursor"`
}

// sourceID is the source a read names, for authentication to read it in the
// same statement; "" when the id cannot name a source.
func (a *documentGetArgs) sourceID() string {
	if a.SourceID == nil || !store.IsUUID(*a.SourceID) {
		return ""
	}
	return *a.SourceID
}

func (d *documentTools) get(ctx context.Context, p principal, pre *sourceRead, args *documentGetArgs) (any, error) {
	switch {
	case args.SourceID == nil:
		return nil, invalidArgument("source_id is required")
	case args.Cursor != nil && args.StartByte != nil:
		return nil, invalidArgument("cursor and start_byte cannot be combined")
	case args.StartByte != nil && *args.StartByte < 0:
		return nil, newCoded("byte_range_invalid", "start_byte must not be negative")
	case args.MaxBytes != nil && *args.MaxBytes < 1:
		return nil, invalidArgument("max_bytes must be at least 1")
	}
	sourceID := *args.SourceID
	addLog(ctx, slog.String("source", sourceID))
	src, res, err := d.resolveAndRead(ctx, p, pre, sourceID, args.Cursor, args.StartByte, args.MaxBytes)
	// Every read that names a source is audited, refused ones included (another
	// project's id, a forged cursor). Fail closed: content whose read could not
	// be audited is not returned.
	if auditErr := d.audit(ctx, p, sourceID, src, res, err); auditErr != nil && err == nil {
		return nil, auditErr
	}
	if err != nil {
		return nil, err
	}
	return res, nil
}

// resolveAndRead checks the cursor and the source's state, then reads. src is
// nil unless the source exists in the caller's project.
func (d *documentTools) resolveAndRead(ctx context.Context, p principal, pre *sourceRead, sourceID string, cursorArg *string, startArg, maxArg *int64) (*store.DocumentSource, *documentResult, error) {
	// A malformed id is answered exactly like an unknown one.
	if !store.IsUUID(sourceID) {
		return nil, nil, errSourceNotFound
	}
	var cur *cursor.Cursor
	if cursorArg != nil {
		c, err := d.cursors.Decode(*cursorArg, d.now())
		if err != nil {
			return nil, nil, err
		}
		// A cursor continues exactly one read: same kind, project, caller and source.
		if c.Kind != cursorKindDoc || c.Project != p.auth.ProjectID || c.Principal != p.subject() || c.Source != sourceID {
			return nil, nil, cursor.ErrInvalid
		}
		cur = &c
	}
	src, err := d.source(ctx, pre, p.auth.ProjectID, sourceID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, nil, errSourceNotFound
	case err != nil:
		return nil, nil, err
	case src.RevokedAt != nil:
		return &src, nil, newCoded("source_revoked", "the document source has been revoked")
	case src.RepositoryRevokedAt != nil:
		return &src, nil, newCoded("repository_revoked", "the source's repository has been unlinked from the project: "+
			"an administrator can link it again with heyaira-admin link-repository; "+
			"runtime_bootstrap_get lists the sources that can still be read")
	case src.CommitSHA == nil:
		return &src, nil, newCoded("source_requires_dispatch", "the source tracks a branch, so it is not read on its own: "+
			"call workflow_dispatch, which freezes the branch's current commit into the workflow's instructions; "+
			"or an administrator pins the source to a commit (heyaira-admin add-document-source --commit-sha)")
	}
	if cur != nil && (cur.Commit != *src.CommitSHA || cur.Path != src.Path) {
		return &src, nil, cursor.ErrInvalid
	}
	res, err := d.read(ctx, p, src, cur, startArg, maxArg)
	return &src, res, err
}

// source returns the project's source, as read with the bearer token (pre,
// authn.go) when it was, else with its own query.
func (d *documentTools) source(ctx context.Context, pre *sourceRead, projectID, sourceID string) (store.DocumentSource, error) {
	if src, ok, err := pre.lookup(projectID, sourceID); ok {
		return src, err
	}
	return d.st.ProjectSource(ctx, projectID, sourceID)
}

// read fetches the file (one GitHub request, no cache) and cuts the fragment.
func (d *documentTools) read(ctx context.Context, p principal, src store.DocumentSource, cur *cursor.Cursor, startArg, maxArg *int64) (*documentResult, error) {
	release, err := d.flights.acquire(ctx, p)
	if err != nil {
		return nil, err
	}
	defer release()
	f, err := d.gh.GetFile(ctx, github.Binding{
		Owner: src.GitHubOwner, Repo: src.GitHubRepository,
		InstallationID: src.GitHubInstallationID, RepositoryID: deref(src.GitHubRepositoryID),
		Tenant: p.auth.ProjectID, // GitHub's secondary limits then hold this project (github/ratelimits.go)
	}, src.Path, *src.CommitSHA)
	if err != nil {
		return nil, githubFailure(err)
	}
	return d.cut(p, src, cur, startArg, maxArg, f.Content, f.SHA256)
}

// cut makes the result for the fragment of content the arguments or the
// cursor ask for. The result shares no memory with content.
func (d *documentTools) cut(p principal, src store.DocumentSource, cur *cursor.Cursor, startArg, maxArg *int64, content []byte, sum [sha256.Size]byte) (*documentResult, error) {
	fileSHA := hex.EncodeToString(sum[:])
	start := 0
	if startArg != nil {
		start = int(min(*startArg, int64(len(content))+1))
	}
	if cur != nil {
		// The cursor is bound to the file's hash: a changed file cannot be
		// continued, because its offsets no longer mean the same bytes.
		if cur.FileSHA256 != fileSHA {
			return nil, newCoded("provider_inconsistent", "the document changed since the cursor was issued")
		}
		start = int(cur.Offset)
	}
	limit := src.FragmentLimit
	if maxArg != nil && *maxArg < int64(limit) {
		limit = int(*maxArg)
	}
	end, err := fragmentEnd(content, start, limit)
	if err != nil {
		return nil, err
	}
	frag := content[start:end]
	fragSum := sha256.Sum256(frag)
	res := &documentResult{
		SourceID: src.ID, GitHubOwner: src.GitHubOwner, GitHubRepository: src.GitHubRepository,
		Path: src.Path, CommitSHA: *src.CommitSHA, Content: string(frag), // a copy
		Range:  documentRange{StartByte: start, EndByte: end, TotalBytes: len(content)},
		SHA256: fileSHA, FragmentSHA256: hex.EncodeToString(fragSum[:]),
	}
	if end < len(content) {
		res.NextCursor = d.cursors.Encode(cursor.Cursor{
			Kind: cursorKindDoc, Project: p.auth.ProjectID, Principal: p.subject(), Source: src.ID,
			Commit: *src.CommitSHA, Path: src.Path, Offset: int64(end), FileSHA256: fileSHA,
			Expires: d.now().Add(cursorLifetime),
		})
	}
	return res, nil
}

// audit records every document read that reached the provider: who, which
// source and commit, the byte range and hashes, and the outcome. Never content.
func (d *documentTools) audit(ctx context.Context, p principal, sourceID string, src *store.DocumentSource, res *documentResult, readErr error) error {
	outcome := store.OutcomeOK
	details := map[string]any{}
	if src != nil {
		// Only what the caller's own project holds; nothing about other projects.
		details["path"] = src.Path
		if src.CommitSHA != nil {
			details["commit_sha"] = *src.CommitSHA
		}
	}
	if !store.IsUUID(sourceID) {
		sourceID = "" // a malformed id is the caller's text: not stored
	}
	if readErr != nil {
		outcome, _ = classify(readErr)
	} else {
		details["start_byte"] = res.Range.StartByte
		details["end_byte"] = res.Range.EndByte
		details["total_bytes"] = res.Range.TotalBytes
		details["sha256"] = res.SHA256
		details["fragment_sha256"] = res.FragmentSHA256
	}
	return d.st.Audit(context.WithoutCancel(ctx), store.AuditEvent{
		Actor: p.subject(), Action: "document.read", ProjectID: p.auth.ProjectID,
		Target: sourceID, Outcome: outcome, Details: details,
	})
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
