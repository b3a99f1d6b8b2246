package tools

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"log/slog"
	"strconv"
	"time"

	"heyaira/cursor"
	"heyaira/github"
	"heyaira/server/internal/web"
	"heyaira/server/mcp"
	"heyaira/store"
)

const (
	maxFileBytes   = 1 << 20 // the provider refuses larger documents
	cursorLifetime = 15 * time.Minute
	CursorKindDoc  = "document"
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
	pages   pager
	now     func() time.Time
}

func (d *documentTools) tools() []*mcp.Tool {
	return []*mcp.Tool{
		{Name: "runtime_bootstrap_get", Title: "Get runtime bootstrap", Scope: "documents:read", ReadOnly: true,
			Description: "List the project's active allowlisted documents (source_id, repository, role, path, " +
				"pinned commit or tracking branch, limits). Fails with runtime_unconfigured when no runtime source exists.",
			ToolArgs: mcp.Typed(d.bootstrap)},
		{Name: "git_document_get", Title: "Read an allowlisted document", Scope: "documents:read", ReadOnly: true,
			Description: "Read one UTF-8 fragment (at most the source's fragment limit, ≤ 64 KB) of an allowlisted " +
				"GitHub document at its pinned commit, with SHA-256 of the whole file and of the fragment. " +
				"Pass next_cursor back as cursor to continue; it is absent on the last fragment.",
			ToolArgs: mcp.Typed(d.get)},
	}
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

type documentGetArgs struct {
	SourceID  *string `json:"source_id" arg:"uuid,required"`
	StartByte *int64  `json:"start_byte" arg:"startByte"`
	MaxBytes  *int64  `json:"max_bytes" arg:"maxBytes"`
	Cursor    *string `json:"cursor" arg:"cursor"`
}

// validateGet refuses arguments the tool answers before any read: such a
// call is not audited (it names nothing the database is asked about).
func validateGet(a *documentGetArgs) error {
	switch {
	case a.Cursor != nil && a.StartByte != nil:
		return mcp.InvalidArgument("cursor and start_byte cannot be combined")
	case a.StartByte != nil && *a.StartByte < 0:
		return mcp.NewCoded("byte_range_invalid", "start_byte must not be negative")
	case a.MaxBytes != nil && *a.MaxBytes < 1:
		return mcp.InvalidArgument("max_bytes must be at least 1")
	}
	return nil
}

// get reads one fragment of an allowlisted document: the read's
// authorization (read_authorize.go), GitHub, then its audit row, committed
// before the answer is returned. Every read that names a source is audited,
// refused ones included (another project's id, a forged cursor).
func (d *documentTools) get(ctx context.Context, p mcp.Principal, args *documentGetArgs) (any, error) {
	if err := validateGet(args); err != nil {
		return nil, err
	}
	web.AddLog(ctx, slog.String("source", *args.SourceID))
	rd := d.authorize(ctx, p, args)
	var res *documentResult
	err := rd.err
	if err == nil {
		res, err = d.read(ctx, p, rd.src, rd.cur, rd.start, args.MaxBytes)
	}
	if aerr := d.audit(ctx, p, rd, res, err); aerr != nil {
		return nil, aerr
	}
	if err != nil {
		return nil, err
	}
	web.AddLog(ctx, slog.String("sha256", res.SHA256), slog.String("fragment_sha256", res.FragmentSHA256),
		slog.Int("end_byte", res.Range.EndByte), slog.Int("total_bytes", res.Range.TotalBytes))
	return res, nil
}

// read fetches the file (one GitHub request, no cache) and cuts the fragment
// the arguments or the cursor ask for. The result shares no memory with the file.
func (d *documentTools) read(ctx context.Context, p mcp.Principal, src store.DocumentSource, cur *cursor.Cursor, start64 int64, maxArg *int64) (*documentResult, error) {
	release, err := d.flights.acquire(ctx, p)
	if err != nil {
		return nil, err
	}
	defer release()
	f, err := d.gh.GetFile(ctx, github.Binding{
		Owner: src.GitHubOwner, Repo: src.GitHubRepository,
		InstallationID: src.GitHubInstallationID, RepositoryID: deref(src.GitHubRepositoryID),
		Tenant: p.Auth.ProjectID, // GitHub's secondary limits then hold this project (github/ratelimits.go)
	}, src.Path, *src.CommitSHA)
	if err != nil {
		return nil, mcp.GitHubFailure(err)
	}
	fileSHA := hex.EncodeToString(f.SHA256[:])
	start := int(min(start64, int64(len(f.Content))+1))
	// A cursor is bound to the file's hash: a changed file cannot be
	// continued, because its offsets no longer mean the same bytes.
	if cur != nil && cur.FileSHA256 != fileSHA {
		return nil, mcp.NewCoded("provider_inconsistent", "the document changed since the cursor was issued")
	}
	limit := src.FragmentLimit
	if maxArg != nil && *maxArg < int64(limit) {
		limit = int(*maxArg)
	}
	end, err := fragmentEnd(f.Content, start, limit)
	if errors.Is(err, errBelowCharacter) && limit == src.FragmentLimit {
		// A limit under 4 bytes cannot hold every character: only an
		// administrator can raise it (docs/document-sources.md).
		return nil, mcp.NewCoded("byte_range_invalid", "the source's fragment limit of "+strconv.Itoa(limit)+
			" bytes is smaller than the character at start_byte")
	}
	if err != nil {
		return nil, err
	}
	frag := f.Content[start:end]
	fragSum := sha256.Sum256(frag)
	res := &documentResult{
		SourceID: src.ID, GitHubOwner: src.GitHubOwner, GitHubRepository: src.GitHubRepository,
		Path: src.Path, CommitSHA: *src.CommitSHA, Content: string(frag), // a copy
		Range:  documentRange{StartByte: start, EndByte: end, TotalBytes: len(f.Content)},
		SHA256: fileSHA, FragmentSHA256: hex.EncodeToString(fragSum[:]),
	}
	if end < len(f.Content) {
		res.NextCursor = d.cursors.Encode(cursor.Cursor{
			Kind: CursorKindDoc, Project: p.Auth.ProjectID, Principal: p.Subject(), Source: src.ID,
			Commit: *src.CommitSHA, Path: src.Path, Offset: int64(end), FileSHA256: fileSHA,
			Expires: d.now().Add(cursorLifetime),
		})
	}
	return res, nil
}

func deref[T any](p *T) (v T) {
	if p != nil {
		v = *p
	}
	return v
}
