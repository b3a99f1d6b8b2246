package tools

import (
	"context"
	"errors"

	"heyaira/cursor"
	"heyaira/server/mcp"
	"heyaira/store"
)

// A git_document_get is authorized in Go, against the database of the
// moment: the source of the caller's project (one statement), its state,
// and a continuation's cursor. Whatever the outcome, the read then writes
// one audit row (audit), committed before any byte of the document leaves
// the server.

// documentRead is one call's read as its authorization found it.
type documentRead struct {
	sourceID string // the source named, or "" when the id cannot name one
	src      store.DocumentSource
	found    bool           // src is the named source of the caller's project
	cur      *cursor.Cursor // a continuation's cursor
	start    int64          // where the fragment starts
	err      error          // why the read is refused; nil when it may go ahead
}

// authorize decides whether p may read what a names. The refusals come in
// the order the tool answers them: the id, the cursor's signature, expiry,
// kind, source, project and caller, then the source's state, then the
// cursor's commit and path.
func (d *documentTools) authorize(ctx context.Context, p mcp.Principal, a *documentGetArgs) documentRead {
	rd := documentRead{sourceID: *a.SourceID, start: deref(a.StartByte)}
	if !store.IsUUID(rd.sourceID) {
		// Answered exactly like an unknown id; the row names no target, the
		// id being the caller's text.
		rd.sourceID, rd.err = "", errSourceNotFound
		return rd
	}
	if a.Cursor != nil {
		c, err := d.cursors.Decode(*a.Cursor, d.now())
		if err == nil && (c.Kind != CursorKindDoc || c.Source != rd.sourceID || c.Project != p.Auth.ProjectID ||
			c.Principal != p.Subject()) {
			err = cursor.ErrInvalid // a cursor continues exactly one read: same kind, project, caller and source
		}
		if err != nil {
			rd.err = err
			return rd
		}
		rd.cur, rd.start = &c, c.Offset
	}
	src, err := d.st.ProjectSource(ctx, p.Auth.ProjectID, rd.sourceID)
	if err != nil {
		rd.err = mcp.NotFound(err, errSourceNotFound)
		return rd
	}
	rd.src, rd.found = src, true
	switch {
	case src.RevokedAt != nil:
		rd.err = errSourceRevoked
	case src.RepositoryRevokedAt != nil:
		rd.err = errRepositoryRevoked
	case src.CommitSHA == nil:
		rd.err = errSourceRequiresDispatch
	case rd.cur != nil && (rd.cur.Commit != *src.CommitSHA || rd.cur.Path != src.Path):
		rd.err = cursor.ErrInvalid
	}
	return rd
}

var (
	errSourceNotFound    = mcp.NewCoded("source_not_found", "no such document source in this project")
	errSourceRevoked     = mcp.NewCoded("source_revoked", "the document source has been revoked")
	errRepositoryRevoked = mcp.NewCoded("repository_revoked", "the source's repository has been unlinked from the project: "+
		"an administrator can link it again with heyaira-admin link-repository; "+
		"runtime_bootstrap_get lists the sources that can still be read")
	errSourceRequiresDispatch = mcp.NewCoded("source_requires_dispatch", "the source tracks a branch, so it is not read on its own: "+
		"call workflow_dispatch, which freezes the branch's current commit into the workflow's instructions; "+
		"or an administrator pins the source to a commit (heyaira-admin add-document-source --commit-sha)")
)

// audit writes the read's one row: who, which source, the outcome code, and
// what was read (path, commit, range, hashes), never content. A read
// without its row fails closed: the caller returns the error instead of
// the document.
func (d *documentTools) audit(ctx context.Context, p mcp.Principal, rd documentRead, res *documentResult, readErr error) error {
	code := store.OutcomeOK
	if readErr != nil {
		code, _ = mcp.Classify(mcp.QuotaError(readErr))
	}
	details := map[string]any{}
	if rd.found {
		// Only what the caller's own project holds; nothing about other projects.
		details["path"] = rd.src.Path
		if rd.src.CommitSHA != nil {
			details["commit_sha"] = *rd.src.CommitSHA
		}
	}
	if rd.err == nil {
		details["start_byte"] = rd.start
		if rd.cur != nil {
			details["cursor_sha256"] = rd.cur.FileSHA256 // a continuation is served only from a file with this hash
		}
	}
	if res != nil {
		details["end_byte"], details["sha256"], details["fragment_sha256"] = res.Range.EndByte, res.SHA256, res.FragmentSHA256
	}
	err := d.st.Audit(context.WithoutCancel(ctx), store.AuditEvent{Actor: p.Subject(), Action: "document.read",
		ProjectID: p.Auth.ProjectID, Target: rd.sourceID, Outcome: code, Details: details})
	if err != nil {
		return errors.Join(errors.New("git_document_get: the read could not be audited, so it is refused"), err)
	}
	return nil
}
