package store_test

import (
	"errors"
	"testing"
	"time"

	"heyaira/store"
	"heyaira/store/storetest"

	"github.com/google/go-cmp/cmp"
)

// missingID is a well-formed UUID that names nothing.
const missingID = "00000000-0000-4000-8000-000000000000"

// tree is a tenant tree made with the store's own methods.
type tree struct {
	db        *store.DB
	account   store.Account
	project   store.Project
	principal store.Principal
}

func newTree(t *testing.T) tree {
	t.Helper()
	db := storetest.New(t)
	ctx := t.Context()
	a, err := db.CreateAccount(ctx, "Acme")
	if err != nil {
		t.Fatalf("CreateAccount: %v", err)
	}
	p, err := db.CreateProject(ctx, a.ID, "Continuity")
	if err != nil {
		t.Fatalf("CreateProject: %v", err)
	}
	u, err := db.CreatePrincipal(ctx, a.ID, "Ada")
	if err != nil {
		t.Fatalf("CreatePrincipal: %v", err)
	}
	return tree{db: db, account: a, project: p, principal: u}
}

// auditRows counts audit_events, to show one row per change and none per refusal.
func auditRows(t *testing.T, db *store.DB) int {
	t.Helper()
	var n int
	if err := db.SQL().QueryRowContext(t.Context(), `SELECT count(*) FROM audit_events`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// wantRefused checks that err is a *store.RefusedError of kind with message msg.
func wantRefused(t *testing.T, err, kind error, msg string) {
	t.Helper()
	var r *store.RefusedError
	if !errors.As(err, &r) || !errors.Is(err, kind) {
		t.Fatalf("err = %v, want a *RefusedError matching %v", err, kind)
	}
	if r.Msg != msg {
		t.Errorf("message = %q, want %q", r.Msg, msg)
	}
}

func TestTenantTree(t *testing.T) {
	t.Parallel()
	tr := newTree(t)
	ctx := t.Context()
	if n := auditRows(t, tr.db); n != 3 {
		t.Errorf("%d audit rows after three creations, want 3", n)
	}
	if tr.project.AccountID != tr.account.ID || tr.principal.AccountID != tr.account.ID {
		t.Errorf("project %+v / principal %+v not in account %s", tr.project, tr.principal, tr.account.ID)
	}
	got, err := tr.db.GetProject(ctx, tr.project.ID)
	if err != nil || !got.CreatedAt.Equal(tr.project.CreatedAt) || got.ID != tr.project.ID {
		t.Errorf("GetProject = %+v, %v; want %+v", got, err, tr.project)
	}

	m, err := tr.db.AddMember(ctx, tr.project.ID, tr.principal.ID)
	if err != nil {
		t.Fatalf("AddMember: %v", err)
	}
	want := store.Membership{ProjectID: tr.project.ID, PrincipalID: tr.principal.ID, AccountID: tr.account.ID}
	if diff := cmp.Diff(want, m, cmpIgnoreTime); diff != "" {
		t.Errorf("AddMember (-want +got):\n%s", diff)
	}

	other, err := tr.db.CreateAccount(ctx, "Other")
	if err != nil {
		t.Fatal(err)
	}
	stranger, err := tr.db.CreatePrincipal(ctx, other.ID, "Eve")
	if err != nil {
		t.Fatal(err)
	}
	before := auditRows(t, tr.db)
	refusals := []struct {
		name string
		call func() error
		kind error
		msg  string
	}{
		{"member twice", func() error { _, err := tr.db.AddMember(ctx, tr.project.ID, tr.principal.ID); return err },
			store.ErrConflict, "principal " + tr.principal.ID + " is already a member of project " + tr.project.ID},
		{"member of another account", func() error { _, err := tr.db.AddMember(ctx, tr.project.ID, stranger.ID); return err },
			store.ErrInvalid, "principal " + stranger.ID + " belongs to account " + other.ID + ", not to account " +
				tr.account.ID + " of project " + tr.project.ID},
		{"member of unknown project", func() error { _, err := tr.db.AddMember(ctx, missingID, tr.principal.ID); return err },
			store.ErrNotFound, "project " + missingID + " not found"},
		{"unknown principal", func() error { _, err := tr.db.AddMember(ctx, tr.project.ID, missingID); return err },
			store.ErrNotFound, "principal " + missingID + " not found"},
		{"project of unknown account", func() error { _, err := tr.db.CreateProject(ctx, missingID, "p"); return err },
			store.ErrNotFound, "account " + missingID + " not found"},
		{"principal of unknown account", func() error { _, err := tr.db.CreatePrincipal(ctx, missingID, "u"); return err },
			store.ErrNotFound, "account " + missingID + " not found"},
		{"get unknown project", func() error { _, err := tr.db.GetProject(ctx, missingID); return err },
			store.ErrNotFound, "project " + missingID + " not found"},
		{"audit of unknown account", func() error {
			_, err := tr.db.ListAccountAudit(ctx, missingID, time.Time{}, 10)
			return err
		}, store.ErrNotFound, "account " + missingID + " not found"},
	}
	for _, tt := range refusals {
		t.Run(tt.name, func(t *testing.T) {
			wantRefused(t, tt.call(), tt.kind, tt.msg)
		})
	}
	if n := auditRows(t, tr.db); n != before {
		t.Errorf("refusals wrote %d audit rows", n-before)
	}

	// The account's audit log holds its projects' events too, oldest first,
	// a document read's among them, whose row names the project alone.
	if err := tr.db.Audit(ctx, store.AuditEvent{Actor: "principal:" + tr.principal.ID, Action: "document.read",
		ProjectID: tr.project.ID, Target: "src", Outcome: store.OutcomeOK}); err != nil {
		t.Fatal(err)
	}
	otherProject, err := tr.db.CreateProject(ctx, other.ID, "elsewhere") // its events are not this account's
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.db.Audit(ctx, store.AuditEvent{Actor: "principal:" + stranger.ID, Action: "document.read",
		ProjectID: otherProject.ID, Target: "src", Outcome: store.OutcomeOK}); err != nil {
		t.Fatal(err)
	}
	events, err := tr.db.ListAccountAudit(ctx, tr.account.ID, time.Time{}, 100)
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, e := range events {
		actions = append(actions, e.Action)
	}
	if diff := cmp.Diff([]string{"account.create", "project.create", "principal.create", "project_member.add", "document.read"}, actions); diff != "" {
		t.Errorf("ListAccountAudit actions (-want +got):\n%s", diff)
	}
}

// cmpIgnoreTime compares structs without their timestamps.
var cmpIgnoreTime = cmp.Comparer(func(a, b time.Time) bool { return true })
