package store

import (
	"context"
	"encoding/json"
	"time"
)

// A document read costs one statement before GitHub is called, and none
// after it on the success path: AuthorizeRead checks the bearer token
// (exactly as Authenticate), reads the named source of the token's project
// (exactly as ProjectSource), decides whether the read may go ahead, and
// writes its audit_events row, all in one INSERT … SELECT … RETURNING. The
// row therefore means "this principal was allowed (or refused) this read of
// this range at this time", and it is committed before a byte of the
// document leaves the server. A read that fails after it (GitHub, the file's
// own checks, a rate limit) writes a second row with Audit.

// ReadIntent is a document read as its caller asked for it, before the
// database has looked at it.
type ReadIntent struct {
	// SourceID is the source named, a UUID in canonical form, or "" when the
	// caller's id cannot name one (the row's target is then empty).
	SourceID string
	// Refusal is the outcome code of a refusal decided from the arguments
	// alone (a malformed id, a forged or expired cursor); "" when there is none.
	Refusal string
	// Cursor is the continuation's decoded cursor, nil for a first read.
	Cursor *ReadCursor
	// StartByte is where the fragment starts (the cursor's offset for a
	// continuation); MaxBytes is the caller's bound (0: the source's limit).
	StartByte, MaxBytes int64
}

// ReadCursor is what a cursor binds a continuation to and the database
// checks: the project, the actor (Principal, as in audit rows), the source's
// commit and path, and the SHA-256 of the file it was cut from.
type ReadCursor struct {
	Project, Principal, Commit, Path, FileSHA256 string
}

// ReadAuthorization is the database's answer to a ReadIntent.
type ReadAuthorization struct {
	// Source is the named source of the token's project; Found is false when
	// there is none (or the token may not read sources), as ProjectSource's
	// ErrNotFound.
	Source DocumentSource
	Found  bool
	// Outcome is the row's outcome: OutcomeOK when the read may go ahead, else
	// the refusal's stable code (the intent's Refusal, cursor_invalid,
	// source_not_found, source_revoked, repository_revoked,
	// source_requires_dispatch).
	Outcome string
	// AuditID is the audit_events row written, or 0 when none was: the token
	// is not documents:read for this server (its call is refused 401 or 403
	// before any read, as before).
	AuditID int64
}

// readOutcomes are the outcomes the statement decides itself.
var readOutcomes = []string{OutcomeOK, "cursor_invalid", "source_not_found", "source_revoked", "repository_revoked", "source_requires_dispatch"}

// authorizeReadSQL's arguments: $1 token hash, $2 now, $3 source id, $4 this
// server's resource (the audience), $5 the intent's refusal, $6–$9 the
// cursor's project, actor, commit and path (all empty without a cursor), $10
// the request's details (JSON), $11 max_bytes (0: none). An empty $3 names
// no source, an empty $5 is no refusal.
//
// The row is inserted when the token may read documents here: audience
// (legacy tokens have none) and documents:read. Its outcome follows the
// order in which the tool answers: a refusal from the arguments, a cursor of
// another project or actor, then the source's state, then a cursor of
// another commit or path. A refusal before the source is reached names no
// path, as the tool names none.
const authorizeReadSQL = `
	WITH a (kind, token_id, grant_id, client_id, principal_id, project_id, scopes, resource, expires_at, github_budget) AS (` +
	authenticateSQL + `),
	t AS (
		SELECT a.*, CASE a.kind WHEN 'legacy' THEN 'legacy:' || a.token_id ELSE 'principal:' || a.principal_id END AS actor,
		       (a.kind = 'legacy' OR a.resource = $4::text) AND 'documents:read' = ANY (a.scopes) AS may_read
		FROM a),
	d AS (
		SELECT t.*, s.id AS s_id, s.project_id AS s_project, s.repository_id AS s_repository, r.github_owner,
		       r.github_repository, r.github_installation_id, r.github_repository_id, s.role, s.path, s.commit_sha,
		       s.tracking_ref, s.profile, s.fragment_limit, s.created_at, s.revoked_at AS s_revoked, r.revoked_at AS r_revoked,
		       CASE WHEN $5::text <> '' THEN $5::text
		            WHEN $6::text <> '' AND ($6::text <> t.project_id OR $7::text <> t.actor) THEN 'cursor_invalid'
		       END AS early
		FROM t
		LEFT JOIN document_sources s ON s.id = NULLIF($3::text, '')::uuid AND s.project_id = t.project_id::uuid AND t.may_read
		LEFT JOIN repositories r ON r.id = s.repository_id),
	o AS (
		SELECT d.*, COALESCE(early, CASE
		            WHEN s_id IS NULL THEN 'source_not_found'
		            WHEN s_revoked IS NOT NULL THEN 'source_revoked'
		            WHEN r_revoked IS NOT NULL THEN 'repository_revoked'
		            WHEN commit_sha IS NULL THEN 'source_requires_dispatch'
		            WHEN $6::text <> '' AND ($8::text <> commit_sha OR $9::text <> path) THEN 'cursor_invalid'
		            ELSE 'ok' END) AS outcome
		FROM d),
	ins AS (
		INSERT INTO audit_events (actor, action, project_id, target, outcome, details)
		SELECT actor, 'document.read', project_id::uuid, $3::text, outcome, CASE
		         WHEN early IS NOT NULL OR s_id IS NULL THEN '{}'::jsonb
		         WHEN outcome = 'ok' THEN jsonb_build_object('path', path, 'commit_sha', commit_sha,
		              'max_bytes', CASE WHEN $11::bigint > 0 THEN LEAST($11::bigint, fragment_limit) ELSE fragment_limit END) || $10::jsonb
		         ELSE jsonb_strip_nulls(jsonb_build_object('path', path, 'commit_sha', commit_sha)) END
		FROM o WHERE may_read
		RETURNING id)
	SELECT kind, token_id, grant_id, client_id, principal_id, project_id, scopes, resource, expires_at, github_budget,
	       s_id IS NOT NULL,
	       COALESCE(s_id::text, ''), COALESCE(s_project::text, ''), COALESCE(s_repository::text, ''),
	       COALESCE(github_owner, ''), COALESCE(github_repository, ''), COALESCE(github_installation_id, 0),
	       github_repository_id, COALESCE(role, ''), COALESCE(path, ''), commit_sha, tracking_ref,
	       profile, COALESCE(fragment_limit, 0), COALESCE(created_at, 'epoch'), s_revoked, r_revoked,
	       outcome, COALESCE((SELECT id FROM ins), 0)
	FROM o`

// AuthorizeRead authenticates the token whose SHA-256 is tokenHash at now,
// for resource, and authorizes in and audits it, in one statement. It
// returns ErrNotFound for an unknown, expired or revoked token, and writes
// nothing then. The caller still checks the audience and the scope on the
// Auth (to answer 401 or 403): the statement writes no row for a token that
// fails them.
func (db *DB) AuthorizeRead(ctx context.Context, tokenHash []byte, now time.Time, resource string, in ReadIntent) (Auth, ReadAuthorization, error) {
	var a Auth
	var r ReadAuthorization
	details := map[string]any{"start_byte": in.StartByte}
	var cur ReadCursor
	if in.Cursor != nil {
		cur = *in.Cursor
		details["sha256"] = cur.FileSHA256 // a continuation is served only from a file with this hash
	}
	b, err := json.Marshal(details)
	if err != nil {
		return Auth{}, ReadAuthorization{}, wrap("authorize read", err)
	}
	dests := append(append(authDests(&a), &r.Found), sourceDests(&r.Source)...)
	dests = append(dests, &r.Outcome, &r.AuditID)
	err = db.scanPrepared(ctx, "authorize read", dests, authorizeReadSQL, tokenHash, now, in.SourceID, resource,
		in.Refusal, cur.Project, cur.Principal, cur.Commit, cur.Path, b, max(in.MaxBytes, 0))
	if err != nil {
		return Auth{}, ReadAuthorization{}, err
	}
	if !r.Found {
		r.Source = DocumentSource{}
	}
	return a, r, nil
}
