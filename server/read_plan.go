package server

import (
	"context"
	"fmt"

	"heyaira/cursor"
	"heyaira/store"
)

// Once the token, the scope and the tool limiter allow a document read, one
// statement (store.AuthorizeRead) authorizes it and writes its audit row.
// The readPlan is what the arguments ask for, and then carries the
// database's answer to the tool; a read failed after it (GitHub, the file's
// own checks) writes a second row naming the first.

// readPlan is one git_document_get call's read.
type readPlan struct {
	intent store.ReadIntent
	cur    *cursor.Cursor // the decoded cursor; nil for a first read
	// refusal is decided from the arguments alone; intent.Refusal is its code.
	refusal error

	// Set by the read's statement.
	auth store.ReadAuthorization
	// err is why the statement failed although the token is valid (a fault
	// confined to the sources or the audit: DB-06); no row was written.
	err error
}

// plan works out the read a's arguments ask for, or returns nil when the
// tool refuses them before any read (an argument error: not audited, as
// before). It checks the cursor's signature, expiry, kind and source here;
// the database checks its project, principal, commit and path.
func (d *documentTools) plan(a *documentGetArgs) *readPlan {
	if validateGet(a) != nil {
		return nil
	}
	pl := &readPlan{}
	refuse := func(err error) *readPlan {
		pl.refusal = err
		pl.intent.Refusal, _ = classify(err)
		return pl
	}
	// A malformed id is answered exactly like an unknown one, and its row
	// names no target: the id is the caller's text.
	if !store.IsUUID(*a.SourceID) {
		return refuse(errSourceNotFound)
	}
	pl.intent.SourceID = *a.SourceID
	pl.intent.StartByte, pl.intent.MaxBytes = deref(a.StartByte), deref(a.MaxBytes)
	if a.Cursor == nil {
		return pl
	}
	c, err := d.cursors.Decode(*a.Cursor, d.now())
	if err != nil {
		return refuse(err)
	}
	// A cursor continues exactly one read: same kind, project, caller and source.
	if c.Kind != cursorKindDoc || c.Source != pl.intent.SourceID || c.Project == "" || c.Principal == "" {
		return refuse(cursor.ErrInvalid)
	}
	pl.cur = &c
	pl.intent.StartByte = c.Offset
	pl.intent.Cursor = &store.ReadCursor{Project: c.Project, Principal: c.Principal, Commit: c.Commit, Path: c.Path,
		FileSHA256: c.FileSHA256}
	return pl
}

// refusalError is the tool's answer to a read the database refused, whose
// code is the audit row's outcome.
func (pl *readPlan) refusalError() error {
	code := pl.auth.Outcome
	if pl.refusal != nil && code == pl.intent.Refusal {
		return pl.refusal
	}
	for _, e := range []error{cursor.ErrInvalid, errSourceNotFound, errSourceRevoked, errRepositoryRevoked,
		errSourceRequiresDispatch} {
		if c, _ := classify(e); c == code {
			return e
		}
	}
	return fmt.Errorf("document read: the database answered outcome %q", code) // internal: fail closed
}

var (
	errSourceNotFound    = newCoded("source_not_found", "no such document source in this project")
	errSourceRevoked     = newCoded("source_revoked", "the document source has been revoked")
	errRepositoryRevoked = newCoded("repository_revoked", "the source's repository has been unlinked from the project: "+
		"an administrator can link it again with heyaira-admin link-repository; "+
		"runtime_bootstrap_get lists the sources that can still be read")
	errSourceRequiresDispatch = newCoded("source_requires_dispatch", "the source tracks a branch, so it is not read on its own: "+
		"call workflow_dispatch, which freezes the branch's current commit into the workflow's instructions; "+
		"or an administrator pins the source to a commit (heyaira-admin add-document-source --commit-sha)")
)

// recordFailure writes the second audit row of a read that failed after
// its authorization (or whose authorization could not be written): who,
// which source, the outcome code, and the row it follows. Never content.
func (d *documentTools) recordFailure(ctx context.Context, p principal, pl *readPlan, readErr error) {
	code, _ := classify(quotaError(readErr))
	details := map[string]any{}
	if pl.auth.Found {
		// Only what the caller's own project holds; nothing about other projects.
		details["path"] = pl.auth.Source.Path
		if pl.auth.Source.CommitSHA != nil {
			details["commit_sha"] = *pl.auth.Source.CommitSHA
		}
	}
	if pl.auth.AuditID != 0 {
		details["authorization_id"] = pl.auth.AuditID
	}
	err := d.st.Audit(context.WithoutCancel(ctx), store.AuditEvent{
		Actor: p.subject(), Action: "document.read", ProjectID: p.auth.ProjectID,
		Target: pl.intent.SourceID, Outcome: code, Details: details,
	})
	if err != nil && d.logger != nil {
		d.logger.WarnContext(ctx, "audit of a failed document read failed", "req_id", requestID(ctx), "code", code, "err", err)
	}
}
