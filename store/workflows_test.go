package store_test

import (
	"context"
	"errors"
	"testing"

	"heyaira/store"
	"heyaira/store/storetest"

	"github.com/google/go-cmp/cmp"
)

const (
	wfCommitA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	wfCommitB = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
)

// wfFixture is an account with two projects (each with a linked repository
// and a task) and a second account with its own project.
type wfFixture struct {
	db                *store.DB
	account, other    string // accounts
	project, sibling  string // projects of account
	foreign           string // project of other
	task, siblingTask string
}

func newWFFixture(t *testing.T) *wfFixture {
	t.Helper()
	ctx := t.Context()
	f := &wfFixture{db: storetest.New(t)}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	a, err := f.db.CreateAccount(ctx, "acme")
	must(err)
	o, err := f.db.CreateAccount(ctx, "other")
	must(err)
	f.account, f.other = a.ID, o.ID
	for _, x := range []struct {
		dst     *string
		account string
	}{{&f.project, a.ID}, {&f.sibling, a.ID}, {&f.foreign, o.ID}} {
		p, err := f.db.CreateProject(ctx, x.account, "p")
		must(err)
		*x.dst = p.ID
		_, err = f.db.LinkRepository(ctx, store.NewRepository{ProjectID: p.ID, GitHubOwner: "acme",
			GitHubRepository: "app", GitHubInstallationID: 7})
		must(err)
	}
	task, err := f.db.CreateTask(ctx, f.project, "t", "", "principal:x")
	must(err)
	f.task = task.ID
	task, err = f.db.CreateTask(ctx, f.sibling, "t", "", "principal:x")
	must(err)
	f.siblingTask = task.ID
	return f
}

func (f *wfFixture) accountSource(t *testing.T, account, layer, path string) store.AccountSource {
	t.Helper()
	s, err := f.db.AddAccountSource(t.Context(), store.NewAccountSource{AccountID: account, GitHubOwner: "acme",
		GitHubRepository: "agents", GitHubInstallationID: 7, Layer: layer, Path: path, TrackingRef: "main"})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func (f *wfFixture) docSource(t *testing.T, project, role, path, profile string) store.DocumentSource {
	t.Helper()
	s, err := f.db.AddDocumentSource(t.Context(), store.NewDocumentSource{ProjectID: project, GitHubOwner: "acme",
		GitHubRepository: "app", Role: role, Path: path, CommitSHA: wfCommitA, Profile: profile, FragmentLimit: 65536})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func ids(c store.DispatchConfig) []string {
	var out []string
	for _, s := range []*store.AccountSource{c.Core, c.Mode} {
		if s == nil {
			out = append(out, "-")
		} else {
			out = append(out, s.ID)
		}
	}
	for _, s := range c.Instructions {
		out = append(out, s.ID)
	}
	return out
}

// TestDispatchConfigSelection: core and mode come from the project's account
// only (newest active source per layer); instructions are this project's
// active instruction sources for all profiles first, then for the profile.
func TestDispatchConfigSelection(t *testing.T) {
	t.Parallel()
	f := newWFFixture(t)
	ctx := t.Context()
	oldCore := f.accountSource(t, f.account, "core", "docs/agents/core-old.md")
	core := f.accountSource(t, f.account, "core", "docs/agents/core.md")
	revokedMode := f.accountSource(t, f.account, "mode:worker", "docs/agents/revoked.md")
	if _, err := f.db.RevokeAccountSource(ctx, revokedMode.ID); err != nil {
		t.Fatal(err)
	}
	verifier := f.accountSource(t, f.account, "mode:verifier", "docs/agents/verifier.md")
	f.accountSource(t, f.other, "mode:worker", "docs/agents/foreign.md")

	f.docSource(t, f.project, "instruction", "docs/engineer.md", "engineer")
	f.docSource(t, f.project, "instruction", "docs/all.md", "")
	f.docSource(t, f.project, "instruction", "docs/reviewer.md", "reviewer")
	f.docSource(t, f.project, "runtime", "docs/runtime.md", "")
	f.docSource(t, f.project, "instruction", "docs/agents/core.md", "") // a project file named like core stays an instruction
	revoked := f.docSource(t, f.project, "instruction", "docs/revoked.md", "")
	if _, err := f.db.RevokeDocumentSource(ctx, revoked.ID); err != nil {
		t.Fatal(err)
	}
	f.docSource(t, f.sibling, "instruction", "docs/sibling.md", "")
	f.docSource(t, f.foreign, "instruction", "docs/foreign.md", "")

	c, err := f.db.DispatchConfig(ctx, f.project, "engineer", "worker")
	if err != nil {
		t.Fatal(err)
	}
	got := ids(c)
	if got[0] != core.ID || got[0] == oldCore.ID || got[1] != "-" {
		t.Errorf("core, mode = %v, want newest core %s and no mode", got[:2], core.ID)
	}
	var paths []string
	for _, s := range c.Instructions {
		paths = append(paths, s.Path)
	}
	if diff := cmp.Diff([]string{"docs/all.md", "docs/agents/core.md", "docs/engineer.md"}, paths); diff != "" {
		t.Errorf("instructions (-want +got):\n%s", diff)
	}

	c, err = f.db.DispatchConfig(ctx, f.project, "reviewer", "verifier")
	if err != nil {
		t.Fatal(err)
	}
	if c.Mode == nil || c.Mode.ID != verifier.ID || len(c.Instructions) != 3 || c.Instructions[2].Path != "docs/reviewer.md" {
		t.Errorf("reviewer/verifier config = %v", ids(c))
	}

	// Unlinking the repository removes its sources from dispatch.
	if _, err := f.db.UnlinkRepository(ctx, f.project, "acme", "app"); err != nil {
		t.Fatal(err)
	}
	c, err = f.db.DispatchConfig(ctx, f.project, "engineer", "worker")
	if err != nil || len(c.Instructions) != 0 {
		t.Errorf("after unlink: %v, %v", ids(c), err)
	}
}

func (f *wfFixture) newWorkflow(t *testing.T, c store.DispatchConfig) store.NewWorkflow {
	return store.NewWorkflow{ProjectID: f.project, TaskID: f.task, Profile: "engineer", Mode: "worker",
		CreatedBy: "principal:x", Contract: []byte(`{"v":1}`), Config: c,
		AuditDetails: map[string]any{"profile": "engineer"}}
}

func countRows(t *testing.T, db *store.DB, table string) int {
	t.Helper()
	var n int
	// table is a constant of the test, never input.
	mustQuery(t, db, `SELECT count(*) FROM `+table, &n)
	return n
}

// TestCreateWorkflowRecheck changes the configuration after it was read and
// before the workflow is stored, in every way that matters, and expects
// ErrConfigChanged with no workflow and no audit row stored.
// Row AZ-07 (docs/security-tests.md).
func TestCreateWorkflowRecheck(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		change func(ctx context.Context, f *wfFixture, core store.AccountSource, instr store.DocumentSource) error
	}{
		{"revoke account source", func(ctx context.Context, f *wfFixture, core store.AccountSource, _ store.DocumentSource) error {
			_, err := f.db.RevokeAccountSource(ctx, core.ID)
			return err
		}},
		{"revoke document source", func(ctx context.Context, f *wfFixture, _ store.AccountSource, instr store.DocumentSource) error {
			_, err := f.db.RevokeDocumentSource(ctx, instr.ID)
			return err
		}},
		{"unlink repository", func(ctx context.Context, f *wfFixture, _ store.AccountSource, _ store.DocumentSource) error {
			_, err := f.db.UnlinkRepository(ctx, f.project, "acme", "app")
			return err
		}},
		{"new mode source", func(ctx context.Context, f *wfFixture, _ store.AccountSource, _ store.DocumentSource) error {
			_, err := f.db.AddAccountSource(ctx, store.NewAccountSource{AccountID: f.account, GitHubOwner: "acme",
				GitHubRepository: "agents", GitHubInstallationID: 7, Layer: "mode:worker", Path: "docs/agents/w.md", CommitSHA: wfCommitB})
			return err
		}},
		{"new instruction source", func(ctx context.Context, f *wfFixture, _ store.AccountSource, _ store.DocumentSource) error {
			_, err := f.db.AddDocumentSource(ctx, store.NewDocumentSource{ProjectID: f.project, GitHubOwner: "acme",
				GitHubRepository: "app", Role: "instruction", Path: "docs/new.md", TrackingRef: "main", FragmentLimit: 65536})
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newWFFixture(t)
			core := f.accountSource(t, f.account, "core", "docs/agents/core.md")
			instr := f.docSource(t, f.project, "instruction", "docs/all.md", "")
			c, err := f.db.DispatchConfig(t.Context(), f.project, "engineer", "worker")
			if err != nil {
				t.Fatal(err)
			}
			audits := countRows(t, f.db, "audit_events")
			w := f.newWorkflow(t, c)
			if err := tt.change(t.Context(), f, core, instr); err != nil {
				t.Fatal(err)
			}
			_, err = f.db.CreateWorkflow(t.Context(), w)
			if !errors.Is(err, store.ErrConfigChanged) {
				t.Fatalf("CreateWorkflow = %v, want ErrConfigChanged", err)
			}
			if n := countRows(t, f.db, "workflows"); n != 0 {
				t.Errorf("%d workflows stored", n)
			}
			// The change itself is audited (one row); the refused workflow is not.
			if n := countRows(t, f.db, "audit_events"); n != audits+1 {
				t.Errorf("audit rows = %d, want %d", n, audits+1)
			}
		})
	}
}

func TestCreateWorkflowAndCorrection(t *testing.T) {
	t.Parallel()
	f := newWFFixture(t)
	ctx := t.Context()
	core := f.accountSource(t, f.account, "core", "docs/agents/core.md")
	f.docSource(t, f.project, "instruction", "docs/all.md", "")
	c, err := f.db.DispatchConfig(ctx, f.project, "engineer", "worker")
	if err != nil {
		t.Fatal(err)
	}
	parent, err := f.db.CreateWorkflow(ctx, f.newWorkflow(t, c))
	if err != nil {
		t.Fatal(err)
	}
	got, err := f.db.GetWorkflow(ctx, f.project, parent.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(parent, got); diff != "" || string(got.Contract) != `{"v": 1}` || got.ParentID != nil {
		t.Errorf("GetWorkflow (-create +get):\n%s contract %s", diff, got.Contract)
	}
	if _, err := f.db.GetWorkflow(ctx, f.sibling, parent.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetWorkflow from another project = %v, want ErrNotFound", err)
	}
	ev, err := f.db.ListAudit(ctx, f.project, parent.CreatedAt.Add(-1e9), 100)
	if err != nil {
		t.Fatal(err)
	}
	last := ev[len(ev)-1]
	if last.Action != "workflow.dispatch" || last.Target != parent.ID || last.Actor != "principal:x" ||
		last.AccountID != f.account || last.Details["profile"] != "engineer" {
		t.Errorf("audit row = %+v", last)
	}

	// A correction ignores sources added since (it reuses its parent's), but
	// not the revocation of one it uses.
	f.docSource(t, f.project, "instruction", "docs/later.md", "")
	corr := f.newWorkflow(t, c)
	corr.ParentID = parent.ID
	child, err := f.db.CreateWorkflow(ctx, corr)
	if err != nil {
		t.Fatalf("correction: %v", err)
	}
	if child.ParentID == nil || *child.ParentID != parent.ID {
		t.Errorf("child parent = %v", child.ParentID)
	}
	if _, err := f.db.RevokeAccountSource(ctx, core.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := f.db.CreateWorkflow(ctx, corr); !errors.Is(err, store.ErrConfigChanged) {
		t.Errorf("correction after revoke = %v, want ErrConfigChanged", err)
	}
	// A task of another project cannot carry a workflow of this one.
	bad := f.newWorkflow(t, store.DispatchConfig{})
	bad.TaskID = f.siblingTask
	bad.Config, _ = f.db.DispatchConfig(ctx, f.project, "engineer", "worker")
	if _, err := f.db.CreateWorkflow(ctx, bad); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("cross-project task = %v, want ErrInvalid", err)
	}
}
