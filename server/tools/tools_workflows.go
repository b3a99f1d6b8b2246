package tools

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"heyaira/github"
	"heyaira/oauth"
	"heyaira/server/catalog"
	"heyaira/server/internal/web"
	"heyaira/server/mcp"
	"heyaira/store"
)

// maxCorrectionNote bounds workflow_correct's note.
const maxCorrectionNote = 16 << 10

// contractVersion is the version of the frozen contract's JSON shape.
const contractVersion = 1

// workflowTools assemble catalog profiles for tasks and freeze them (docs/design.md
// §11). Sources are read from GitHub at dispatch only; a frozen workflow keeps
// each commit and text, so workflow_get and workflow_correct never resolve a
// branch again. Account sources feed dispatch only: no tool reads one alone.
type workflowTools struct {
	logger  *slog.Logger
	st      *store.DB
	gh      *github.Client
	flights *flightCap
}

func newWorkflowTools(logger *slog.Logger, st *store.DB, gh *github.Client, flights *flightCap) *workflowTools {
	return &workflowTools{logger: logger, st: st, gh: gh, flights: flights}
}

func (w *workflowTools) tools() []*mcp.Tool {
	return []*mcp.Tool{
		{Name: "catalog_list", Title: "List catalog profiles", Scope: "workflows:read", ReadOnly: true,
			Description: "List the built-in profiles with their layer metadata, the account's core and mode " +
				"sources and the project's role-instruction sources (read at dispatch), and catalog.layers_missing warnings.",
			ToolArgs: mcp.Typed(w.list)},
		{Name: "workflow_dispatch", Title: "Dispatch a workflow", Scope: "workflows:write",
			Description: "Assemble a profile for a task in mode worker or verifier (layers core, mode, role " +
				"responsibilities, methodology, role instructions, soul, skills), resolving tracking branches now, " +
				"and freeze it. Returns the full workflow with its instructions. Needs documents:read as well when " +
				"the profile reads any GitHub source.",
			ToolArgs: mcp.Typed(w.dispatch)},
		{Name: "workflow_get", Title: "Get a workflow", Scope: "workflows:read", ReadOnly: true,
			Description: "Return a frozen workflow. view full (default) includes the assembled instructions; " +
				"compact has the same layer metadata without any instruction text. The full view of a workflow " +
				"holding GitHub text needs documents:read as well.",
			ToolArgs: mcp.Typed(w.get)},
		{Name: "workflow_correct", Title: "Correct a workflow", Scope: "workflows:write",
			Description: "Dispatch a correction of a workflow: a child workflow with the same frozen commits and " +
				"texts (no branch is resolved again) and a note (≤ 16 KiB). Returns the full child workflow, so it " +
				"needs documents:read as well when the parent holds GitHub text.",
			ToolArgs: mcp.Typed(w.correct)},
	}
}

// contract is the frozen workflow, stored as JSON. Layers keep their text,
// so the workflow replays without GitHub; Config is what the layers were read
// from, so a correction can check that it is still allowed.
type contract struct {
	Version        int                  `json:"version"`
	Profile        string               `json:"profile"`
	Mode           string               `json:"mode"`
	CatalogSHA256  string               `json:"catalog_sha256"`
	Layers         []catalog.Layer      `json:"layers"`
	Warnings       []catalog.Warning    `json:"warnings"`
	Budget         catalog.Budget       `json:"budget"`
	CorrectionNote string               `json:"correction_note,omitempty"`
	Config         store.DispatchConfig `json:"config"`
}

// workflowView is what workflow_get, workflow_dispatch and workflow_correct
// return. Both views have identical layer metadata; only the full view has
// instruction text (Instructions).
type workflowView struct {
	WorkflowID       string            `json:"workflow_id"`
	ProjectID        string            `json:"project_id"`
	TaskID           string            `json:"task_id"`
	Profile          string            `json:"profile"`
	Mode             string            `json:"mode"`
	ParentWorkflowID *string           `json:"parent_workflow_id"`
	View             string            `json:"view"`
	CatalogSHA256    string            `json:"catalog_sha256"`
	Layers           []catalog.Layer   `json:"layers"`
	Warnings         []catalog.Warning `json:"warnings"`
	Budget           catalog.Budget    `json:"budget"`
	EstTokens        int               `json:"est_tokens"`
	CorrectionNote   string            `json:"correction_note,omitempty"`
	Instructions     string            `json:"instructions,omitempty"`
	CreatedBy        string            `json:"created_by"`
	CreatedAt        time.Time         `json:"created_at"`
}

func newView(wf store.Workflow, c contract, full bool) workflowView {
	v := workflowView{
		WorkflowID: wf.ID, ProjectID: wf.ProjectID, TaskID: wf.TaskID, Profile: wf.Profile, Mode: wf.Mode,
		ParentWorkflowID: wf.ParentID, View: "compact", CatalogSHA256: c.CatalogSHA256,
		Layers: catalog.WithoutText(c.Layers), Warnings: c.Warnings, Budget: c.Budget,
		CorrectionNote: c.CorrectionNote, CreatedBy: wf.CreatedBy, CreatedAt: wf.CreatedAt,
	}
	for _, l := range c.Layers {
		v.EstTokens += l.EstTokens
	}
	if full {
		v.View = "full"
		v.Instructions = catalog.Render(c.Profile, c.Mode, c.Layers, c.CorrectionNote)
	}
	return v
}

// fromGitHub reports whether any layer's text was read from GitHub (it has
// the commit it was read at); built-in layers have none.
func fromGitHub(layers []catalog.Layer) bool {
	return slices.ContainsFunc(layers, func(l catalog.Layer) bool { return l.CommitSHA != nil })
}

var (
	errWorkflowNotFound = mcp.NewCoded("not_found", "no such workflow in this project")
	errConfigChanged    = mcp.NewCoded("dispatch_config_changed",
		"a source or repository used by this workflow was revoked or changed during dispatch; nothing was stored")
)

type workflowDispatchArgs struct {
	TaskID  *string `json:"task_id" arg:"uuid,requiredTogether"`
	Profile *string `json:"profile" arg:"profile,requiredTogether"`
	Mode    *string `json:"mode" arg:"mode,requiredTogether"`
}

func (w *workflowTools) dispatch(ctx context.Context, p mcp.Principal, a *workflowDispatchArgs) (any, error) {
	if _, ok := catalog.Lookup(*a.Profile); !ok {
		return nil, mcp.NewCoded("profile_not_found", "no such profile in the catalog; see catalog_list")
	}
	if !slices.Contains(catalog.Modes(), *a.Mode) {
		return nil, mcp.InvalidArgument("mode must be worker or verifier")
	}
	if _, err := getTask(ctx, w.st, p, *a.TaskID); err != nil {
		return nil, err
	}
	audit := map[string]any{"task_id": *a.TaskID, "profile": *a.Profile, "mode": *a.Mode}
	c, err := w.assemble(ctx, p, "workflows:write", *a.Profile, *a.Mode, audit)
	if err != nil {
		// A scopeError is not audited: it came before anything was read, as a scope check does.
		if !errors.As(err, new(*mcp.ScopeError)) {
			w.auditFailure(ctx, p, "workflow.dispatch", audit, err)
		}
		return nil, err
	}
	return w.store(ctx, p, *a.TaskID, "", c, audit)
}

// assemble reads every configured source (resolving tracking branches now)
// and assembles the profile. A source that cannot be read fails the whole
// dispatch with that source's code. scope is the caller's own, named first
// when documents:read is missing.
func (w *workflowTools) assemble(ctx context.Context, p mcp.Principal, scope, profile, mode string, audit map[string]any) (contract, error) {
	cfg, err := w.st.DispatchConfig(ctx, p.Auth.ProjectID, profile, mode)
	if err != nil {
		return contract{}, err
	}
	// Every configured source is GitHub text in the result; a profile of
	// built-in text alone needs only the caller's own scope.
	if err := p.NeedDocuments(scope, cfg.Core != nil || cfg.Mode != nil || len(cfg.Instructions) > 0); err != nil {
		return contract{}, err
	}
	in := catalog.Input{Profile: profile, Mode: mode}
	for _, x := range []struct {
		src *store.AccountSource
		dst **catalog.Text
	}{{cfg.Core, &in.Core}, {cfg.Mode, &in.ModeText}} {
		s := x.src
		if s == nil {
			continue
		}
		// The schema allows nothing else; checked again because these texts
		// precede every role instruction.
		if !strings.HasPrefix(s.Path, "docs/agents/") {
			return contract{}, fmt.Errorf("account source %s outside docs/agents/", s.ID)
		}
		b := github.Binding{Owner: s.GitHubOwner, Repo: s.GitHubRepository, InstallationID: s.GitHubInstallationID}
		t, err := w.read(ctx, p, b, s.Path, s.CommitSHA, s.TrackingRef)
		if err != nil {
			audit["failed_source_id"] = s.ID
			return contract{}, sourceFailure(s.Layer, s.ID, err)
		}
		t.Source, t.SourceID = catalog.SourceAccount, s.ID
		*x.dst = &t
	}
	for _, s := range cfg.Instructions {
		b := github.Binding{Owner: s.GitHubOwner, Repo: s.GitHubRepository,
			InstallationID: s.GitHubInstallationID, RepositoryID: deref(s.GitHubRepositoryID)}
		t, err := w.read(ctx, p, b, s.Path, s.CommitSHA, s.TrackingRef)
		if err != nil {
			audit["failed_source_id"] = s.ID
			return contract{}, sourceFailure("role instruction", s.ID, err)
		}
		t.Source, t.SourceID = catalog.SourceDocument, s.ID
		in.RoleInstructions = append(in.RoleInstructions, t)
	}
	asm, err := catalog.Assemble(in)
	var be *catalog.BudgetError
	if errors.As(err, &be) {
		audit["budget"] = be
		return contract{}, budgetExceeded(be)
	}
	if err != nil {
		return contract{}, err
	}
	return contract{Version: contractVersion, Profile: profile, Mode: mode, CatalogSHA256: catalog.Digest(),
		Layers: asm.Layers, Warnings: asm.Warnings, Budget: asm.Budget, Config: cfg}, nil
}

// read fetches one source's text: a tracking source's branch head is resolved
// first (dispatch is the only place that happens), then the file is read at
// that commit. Each GitHub request holds one in-flight slot.
func (w *workflowTools) read(ctx context.Context, p mcp.Principal, b github.Binding, path string, commit, tracking *string) (catalog.Text, error) {
	b.Tenant = p.Auth.ProjectID // GitHub's secondary limits then hold this project (github/ratelimits.go)
	t := catalog.Text{GitHubOwner: b.Owner, GitHubRepository: b.Repo, Path: path, Provenance: catalog.ProvenancePinned,
		CommitSHA: deref(commit)}
	if tracking != nil {
		release, err := w.flights.acquire(ctx, p)
		if err != nil {
			return t, err
		}
		sha, err := w.gh.ResolveBranch(ctx, b, *tracking)
		release()
		if err != nil {
			return t, err
		}
		t.CommitSHA, t.Provenance = sha, catalog.Tracking(*tracking)
	}
	release, err := w.flights.acquire(ctx, p)
	if err != nil {
		return t, err
	}
	f, err := w.gh.GetFile(ctx, b, path, t.CommitSHA)
	release()
	if err != nil {
		return t, err
	}
	t.Content = string(f.Content)
	return t, nil
}

// sourceFailure names the source that could not be read in the public
// message, keeping its stable code. Internal errors pass unchanged, so they
// are logged, never shown.
func sourceFailure(what, sourceID string, err error) error {
	code, public := mcp.Classify(err)
	if code == "internal" || code == "store_unavailable" {
		return err
	}
	return mcp.NewCoded(code, public+" (reading "+what+" source "+sourceID+")")
}

// budgetExceeded is catalog_budget_exceeded; its message and fields give
// each budgeted layer's size.
func budgetExceeded(be *catalog.BudgetError) error {
	parts := make([]string, len(be.Layers))
	for i, l := range be.Layers {
		parts[i] = fmt.Sprintf("%s %s %d", l.Name, l.SourceID, l.Bytes)
	}
	msg := fmt.Sprintf("core, mode and role instructions are %d bytes, over the %d-byte budget: %s",
		be.Total, be.Limit, strings.Join(parts, ", "))
	return mcp.WithFields("catalog_budget_exceeded", msg, map[string]any{
		"limit_bytes": be.Limit, "total_bytes": be.Total, "layers": be.Layers})
}

// store freezes c: the configuration is re-checked in the transaction that
// inserts the workflow and its audit row.
func (w *workflowTools) store(ctx context.Context, p mcp.Principal, taskID, parentID string, c contract, audit map[string]any) (any, error) {
	body, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	action := "workflow.dispatch"
	if parentID != "" {
		action = "workflow.correct"
	}
	auditLayers(audit, c)
	nw := store.NewWorkflow{ProjectID: p.Auth.ProjectID, TaskID: taskID, Profile: c.Profile, Mode: c.Mode,
		ParentID: parentID, CreatedBy: p.Subject(), Contract: body, Config: c.Config, AuditDetails: audit}
	wf, err := w.st.CreateWorkflow(ctx, nw)
	if errors.Is(err, store.ErrConfigChanged) {
		err = errConfigChanged
	}
	if err != nil {
		w.auditFailure(ctx, p, action, audit, err)
		return nil, err
	}
	return newView(wf, c, true), nil
}

// auditLayers records what was assembled: identifiers, commits, hashes and
// sizes, never text (the note only as a hash).
func auditLayers(audit map[string]any, c contract) {
	layers := make([]map[string]any, len(c.Layers))
	for i, l := range c.Layers {
		layers[i] = map[string]any{"name": l.Name, "source": l.Source, "source_id": l.SourceID,
			"provenance": l.Provenance, "commit_sha": l.CommitSHA, "sha256": l.SHA256, "bytes": l.Bytes}
	}
	audit["layers"] = layers
	audit["catalog_sha256"] = c.CatalogSHA256
	var warned []string
	for _, wn := range c.Warnings {
		warned = append(warned, wn.Layers...)
	}
	if warned != nil {
		audit["layers_missing"] = warned
	}
	if c.CorrectionNote != "" {
		sum := sha256.Sum256([]byte(c.CorrectionNote))
		audit["correction_note_sha256"] = hex.EncodeToString(sum[:])
	}
}

// auditFailure records a refused dispatch or correction with its code. It is
// best effort: the caller's error is what the client sees.
func (w *workflowTools) auditFailure(ctx context.Context, p mcp.Principal, action string, details map[string]any, cause error) {
	code, _ := mcp.Classify(cause)
	err := w.st.Audit(context.WithoutCancel(ctx), store.AuditEvent{Actor: p.Subject(), Action: action,
		ProjectID: p.Auth.ProjectID, Outcome: code, Details: details})
	if err != nil {
		w.logger.WarnContext(ctx, "audit failed", "req_id", web.RequestID(ctx), "action", action, "err", err)
	}
}

// load returns a workflow of the caller's project and its contract.
func (w *workflowTools) load(ctx context.Context, p mcp.Principal, id string) (store.Workflow, contract, error) {
	if !store.IsUUID(id) {
		return store.Workflow{}, contract{}, errWorkflowNotFound
	}
	wf, err := w.st.GetWorkflow(ctx, p.Auth.ProjectID, id)
	if err != nil {
		return wf, contract{}, mcp.NotFound(err, errWorkflowNotFound)
	}
	var c contract
	if err := json.Unmarshal(wf.Contract, &c); err != nil || c.Version != contractVersion {
		return wf, contract{}, fmt.Errorf("workflow %s: unreadable contract (version %d): %v", wf.ID, c.Version, err)
	}
	return wf, c, nil
}

type workflowGetArgs struct {
	WorkflowID *string `json:"workflow_id" arg:"uuid,required"`
	View       *string `json:"view" arg:"view"`
}

func (w *workflowTools) get(ctx context.Context, p mcp.Principal, a *workflowGetArgs) (any, error) {
	view := "full"
	if a.View != nil {
		view = *a.View
	}
	if view != "full" && view != "compact" {
		return nil, mcp.InvalidArgument("view must be full or compact")
	}
	wf, c, err := w.load(ctx, p, *a.WorkflowID)
	if err != nil {
		return nil, err
	}
	// Only the full view carries the frozen GitHub texts; the compact one is metadata.
	if err := p.NeedDocuments("workflows:read", view == "full" && fromGitHub(c.Layers)); err != nil {
		return nil, err
	}
	if view == "full" {
		// The full view carries instruction text read from GitHub at
		// dispatch: who re-reads it is audited, as every document read is,
		// and the view fails closed without its row.
		var sources []map[string]any
		for _, l := range c.Layers {
			if l.SourceID != "" {
				sources = append(sources, map[string]any{"source_id": l.SourceID, "commit_sha": l.CommitSHA})
			}
		}
		if err := w.st.Audit(ctx, store.AuditEvent{Actor: p.Subject(), Action: "workflow.read", ProjectID: p.Auth.ProjectID,
			Target: wf.ID, Outcome: store.OutcomeOK, Details: map[string]any{"sources": sources}}); err != nil {
			return nil, err
		}
	}
	v := newView(wf, c, view == "full")
	if !p.HasScope(oauth.DocumentsRead) {
		v.Layers = unlocated(v.Layers)
	}
	return v, nil
}

// unlocated drops each layer's GitHub location (owner, repository, path):
// without documents:read a caller learns that a layer came from a source,
// by its opaque source_id, not where the instructions live (as catalog_list).
func unlocated(layers []catalog.Layer) []catalog.Layer {
	out := slices.Clone(layers)
	for i := range out {
		out[i].GitHubOwner, out[i].GitHubRepository, out[i].Path = "", "", ""
	}
	return out
}

type workflowCorrectArgs struct {
	WorkflowID *string `json:"workflow_id" arg:"uuid,requiredTogether"`
	Note       *string `json:"note" arg:"note,requiredTogether"`
}

// correct stores a child of a workflow with the parent's frozen layers (same
// commits, same texts: nothing is read from GitHub, no branch is resolved)
// and a note. The parent's sources must still be active and unchanged.
func (w *workflowTools) correct(ctx context.Context, p mcp.Principal, a *workflowCorrectArgs) (any, error) {
	if len(*a.Note) == 0 || len(*a.Note) > maxCorrectionNote || !utf8.ValidString(*a.Note) {
		return nil, mcp.InvalidArgument("note must be 1-16384 bytes of UTF-8")
	}
	if err := noNUL(*a.Note); err != nil {
		return nil, err
	}
	parent, c, err := w.load(ctx, p, *a.WorkflowID)
	if err != nil {
		return nil, err
	}
	// The child is returned in full, with the parent's frozen GitHub texts.
	if err := p.NeedDocuments("workflows:write", fromGitHub(c.Layers)); err != nil {
		return nil, err
	}
	c.CorrectionNote = *a.Note
	audit := map[string]any{"task_id": parent.TaskID, "profile": c.Profile, "mode": c.Mode,
		"parent_workflow_id": parent.ID}
	return w.store(ctx, p, parent.TaskID, parent.ID, c, audit)
}
