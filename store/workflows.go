package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"slices"
	"time"
)

// This file keeps workflows: a profile assembled for one task and frozen, with
// every commit it was read at, so that it can be replayed and corrected.
//
// A dispatch reads its configuration (DispatchConfig), reads GitHub outside
// any transaction, and then stores the workflow with CreateWorkflow. Because
// the configuration may change while GitHub is read, CreateWorkflow re-reads
// it in the transaction that inserts the workflow, with FOR SHARE locks, and
// refuses with ErrConfigChanged unless it is exactly what was used. The locks
// make a concurrent revoke or unlink wait until the workflow has committed,
// so a stored workflow never uses a source revoked before it was stored.

// ErrConfigChanged: a source or repository a dispatch used was revoked,
// unlinked, replaced or added between reading the configuration and storing
// the workflow. Nothing was stored.
var ErrConfigChanged = errors.New("store: dispatch configuration changed")

// DispatchConfig is what a profile is assembled from: the account's core and
// mode sources (nil when the account has none) and the project's instruction
// sources for the profile, in assembly order.
type DispatchConfig struct {
	Core         *AccountSource   `json:"core"`
	Mode         *AccountSource   `json:"mode"`
	Instructions []DocumentSource `json:"instructions"`
}

// dispatchAccountSourceSQL selects the account source of one layer for a
// project's account. When an account has several active sources for a layer,
// the newest wins: an administrator replaces a source by adding the new one
// before revoking the old.
const dispatchAccountSourceSQL = `
	SELECT ` + accountSourceColumns + ` FROM account_sources
	WHERE account_id = (SELECT account_id FROM projects WHERE id = $1)
	  AND layer = $2 AND revoked_at IS NULL
	ORDER BY created_at DESC, id DESC
	LIMIT 1`

// dispatchInstructionsSQL selects a project's active instruction sources for
// one profile: those for every profile (profile NULL) first, then those for
// this profile, each oldest first. Only this project's rows can match, so a
// dispatch never sees another project's sources.
const dispatchInstructionsSQL = documentSourceSelect + `
	WHERE s.project_id = $1 AND s.role = 'instruction' AND s.revoked_at IS NULL
	  AND r.revoked_at IS NULL AND (s.profile IS NULL OR s.profile = $2)
	ORDER BY s.profile IS NOT NULL, s.created_at, s.id`

// DispatchConfig returns what a dispatch of profile in mode ("worker" or
// "verifier") in the project is assembled from. Core and mode come only from
// the project's account, never from the project's own repositories.
func (db *DB) DispatchConfig(ctx context.Context, projectID, profile, mode string) (DispatchConfig, error) {
	return txValue(ctx, db, "dispatch config", func(ctx context.Context, tx *sql.Tx) (DispatchConfig, error) {
		return loadDispatchConfig(ctx, tx, projectID, profile, mode, "")
	})
}

// loadDispatchConfig reads the configuration; lock is "" or a locking clause
// for the account source query (the instruction query gets FOR SHARE OF s, r).
func loadDispatchConfig(ctx context.Context, q querier, projectID, profile, mode, lock string) (DispatchConfig, error) {
	var c DispatchConfig
	for _, x := range []struct {
		layer string
		dst   **AccountSource
	}{{"core", &c.Core}, {"mode:" + mode, &c.Mode}} {
		s, err := scanAccountSource(q.QueryRowContext(ctx, dispatchAccountSourceSQL+lock, projectID, x.layer))
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return c, err
		default:
			*x.dst = &s
		}
	}
	instrSQL := dispatchInstructionsSQL
	if lock != "" {
		instrSQL += ` FOR SHARE OF s, r`
	}
	var err error
	c.Instructions, err = all(ctx, q, scanDocumentSource, instrSQL, projectID, profile)
	return c, err
}

// Workflow is a stored, frozen workflow. Contract is the JSON the server
// froze: layers with their commits, hashes and text.
type Workflow struct {
	ID        string          `json:"workflow_id"`
	ProjectID string          `json:"project_id"`
	TaskID    string          `json:"task_id"`
	Profile   string          `json:"profile"`
	Mode      string          `json:"mode"`
	ParentID  *string         `json:"parent_workflow_id"`
	Contract  json.RawMessage `json:"contract"`
	CreatedBy string          `json:"created_by"`
	CreatedAt time.Time       `json:"created_at"`
}

// NewWorkflow is what CreateWorkflow stores.
type NewWorkflow struct {
	ProjectID, TaskID, Profile, Mode string
	// ParentID is "" for a dispatch, the corrected workflow for a correction.
	ParentID  string
	CreatedBy string
	// Contract is the frozen contract (JSON object).
	Contract []byte
	// Config is the configuration the contract was assembled from. For a
	// dispatch, the transaction requires the current configuration to equal
	// it. For a correction (which reuses its parent's commits), it requires
	// every source in it to be still active and unchanged.
	Config DispatchConfig
	// AuditDetails go into the workflow's audit row: identifiers, commits,
	// hashes and sizes only, never text.
	AuditDetails map[string]any
}

const workflowColumns = `id::text, project_id::text, task_id::text, profile, mode,
	parent_workflow_id::text, contract, created_by, created_at`

const insertWorkflowSQL = `
	INSERT INTO workflows (project_id, task_id, profile, mode, parent_workflow_id, contract, created_by)
	VALUES ($1, $2, $3, $4, NULLIF($5, '')::uuid, $6::jsonb, $7)
	RETURNING ` + workflowColumns

// CreateWorkflow re-checks the configuration w was assembled from and, if it
// is unchanged, stores the workflow and its audit row in the same
// transaction. A change is ErrConfigChanged and nothing is stored.
func (db *DB) CreateWorkflow(ctx context.Context, w NewWorkflow) (Workflow, error) {
	var out Workflow
	action := "workflow.dispatch"
	if w.ParentID != "" {
		action = "workflow.correct"
	}
	return result(&out, db.inTx(ctx, "create workflow", func(ctx context.Context, tx *sql.Tx) (err error) {
		if err = recheckConfig(ctx, tx, w); err != nil {
			return err
		}
		if err = checkRows(ctx, tx, quotaWorkflow, "workflows", w.ProjectID, DefaultLimits.Workflows); err != nil {
			return err
		}
		out, err = scanWorkflow(tx.QueryRowContext(ctx, insertWorkflowSQL, w.ProjectID, w.TaskID, w.Profile,
			w.Mode, w.ParentID, string(w.Contract), w.CreatedBy))
		if err != nil {
			return err
		}
		return insertProjectAudit(ctx, tx, AuditEvent{Actor: w.CreatedBy, Action: action, ProjectID: w.ProjectID,
			Target: out.ID, Outcome: OutcomeOK, Details: w.AuditDetails})
	}))
}

// recheckConfig is CreateWorkflow's check, under FOR SHARE locks.
func recheckConfig(ctx context.Context, tx *sql.Tx, w NewWorkflow) error {
	if w.ParentID == "" {
		now, err := loadDispatchConfig(ctx, tx, w.ProjectID, w.Profile, w.Mode, ` FOR SHARE`)
		if err == nil && !sameConfig(now, w.Config) {
			err = ErrConfigChanged
		}
		return err
	}
	for _, s := range []*AccountSource{w.Config.Core, w.Config.Mode} {
		if s == nil {
			continue
		}
		cur, err := scanAccountSource(tx.QueryRowContext(ctx, `SELECT `+accountSourceColumns+`
			FROM account_sources WHERE id = $1
			  AND account_id = (SELECT account_id FROM projects WHERE id = $2)
			FOR SHARE`, s.ID, w.ProjectID))
		if errors.Is(err, sql.ErrNoRows) || err == nil && !sameAccountSource(&cur, s) {
			return ErrConfigChanged
		}
		if err != nil {
			return err
		}
	}
	for _, s := range w.Config.Instructions {
		cur, err := scanDocumentSource(tx.QueryRowContext(ctx, documentSourceSelect+`
			WHERE s.id = $1 AND s.project_id = $2 FOR SHARE OF s, r`, s.ID, w.ProjectID))
		if errors.Is(err, sql.ErrNoRows) || err == nil && !sameDocumentSource(cur, s) {
			return ErrConfigChanged
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func sameConfig(a, b DispatchConfig) bool {
	return sameAccountSource(a.Core, b.Core) && sameAccountSource(a.Mode, b.Mode) &&
		slices.EqualFunc(a.Instructions, b.Instructions, sameDocumentSource)
}

// sameAccountSource compares what a dispatch depends on: identity, location,
// layer, pin or branch, and that neither is revoked.
func sameAccountSource(a, b *AccountSource) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.ID == b.ID && a.AccountID == b.AccountID && a.GitHubOwner == b.GitHubOwner &&
		a.GitHubRepository == b.GitHubRepository && a.GitHubInstallationID == b.GitHubInstallationID &&
		a.Layer == b.Layer && a.Path == b.Path && eqPtr(a.CommitSHA, b.CommitSHA) &&
		eqPtr(a.TrackingRef, b.TrackingRef) && a.RevokedAt == nil && b.RevokedAt == nil
}

// sameDocumentSource is sameAccountSource for project sources, including the
// repository link and its revocation.
func sameDocumentSource(a, b DocumentSource) bool {
	return a.ID == b.ID && a.ProjectID == b.ProjectID && a.RepositoryID == b.RepositoryID &&
		a.GitHubOwner == b.GitHubOwner && a.GitHubRepository == b.GitHubRepository &&
		a.GitHubInstallationID == b.GitHubInstallationID && eqPtr(a.GitHubRepositoryID, b.GitHubRepositoryID) &&
		a.Role == b.Role && a.Path == b.Path && eqPtr(a.CommitSHA, b.CommitSHA) &&
		eqPtr(a.TrackingRef, b.TrackingRef) && eqPtr(a.Profile, b.Profile) &&
		a.RevokedAt == nil && b.RevokedAt == nil && a.RepositoryRevokedAt == nil && b.RepositoryRevokedAt == nil
}

func eqPtr[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

const getWorkflowSQL = `SELECT ` + workflowColumns + ` FROM workflows WHERE id = $1 AND project_id = $2`

// GetWorkflow returns a workflow of the project. A workflow of another
// project is ErrNotFound, exactly like one that does not exist.
func (db *DB) GetWorkflow(ctx context.Context, projectID, workflowID string) (Workflow, error) {
	return queryOne(ctx, db, "get workflow", scanWorkflow, getWorkflowSQL, workflowID, projectID)
}

func scanWorkflow(row sqlScanner) (w Workflow, err error) {
	err = row.Scan(&w.ID, &w.ProjectID, &w.TaskID, &w.Profile, &w.Mode, &w.ParentID, (*[]byte)(&w.Contract),
		&w.CreatedBy, &w.CreatedAt)
	return w, err
}
