package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// This file holds the tenant tree that the admin CLI builds: accounts, projects,
// principals and project membership. Every method that changes a row writes one
// audit event in the same transaction, so an accepted change and its audit row
// commit together or not at all.

// RefusedError is an admin change refused by a rule that only the database can
// check: an unknown project, a repository that is not linked, a source that is
// already revoked. Msg is plain text for the administrator (identifiers only,
// never secrets); errors.Is matches Kind, which is ErrNotFound, ErrConflict or
// ErrInvalid. A refused change has written nothing: its transaction rolled back.
type RefusedError struct {
	Kind error
	Msg  string
}

func (e *RefusedError) Error() string { return e.Msg }

// Unwrap returns the sentinel, so errors.Is(err, ErrNotFound) works.
func (e *RefusedError) Unwrap() error { return e.Kind }

func refused(kind error, format string, args ...any) error {
	return &RefusedError{Kind: kind, Msg: fmt.Sprintf(format, args...)}
}

// Membership says that a principal is a member of a project.
type Membership struct {
	ProjectID   string    `json:"project_id"`
	PrincipalID string    `json:"principal_id"`
	AccountID   string    `json:"account_id"`
	CreatedAt   time.Time `json:"created_at"`
}

const insertAccountSQL = `
	INSERT INTO accounts (name) VALUES ($1)
	RETURNING id, name, created_at`

// CreateAccount creates an account and audits it.
func (db *DB) CreateAccount(ctx context.Context, name string) (Account, error) {
	var a Account
	return result(&a, db.inTx(ctx, "create account", func(ctx context.Context, tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, insertAccountSQL, name).Scan(&a.ID, &a.Name, &a.CreatedAt); err != nil {
			return err
		}
		return insertAudit(ctx, tx, AuditEvent{Actor: ActorAdmin, Action: "account.create",
			AccountID: a.ID, Target: a.ID, Outcome: OutcomeOK})
	}))
}

const projectColumns = `id, account_id, name, created_at`

const insertProjectSQL = `
	INSERT INTO projects (account_id, name) VALUES ($1, $2)
	RETURNING ` + projectColumns

// CreateProject creates a project in an existing account and audits it.
// An unknown account is a *RefusedError (ErrNotFound).
func (db *DB) CreateProject(ctx context.Context, accountID, name string) (Project, error) {
	var p Project
	return result(&p, db.inTx(ctx, "create project", func(ctx context.Context, tx *sql.Tx) (err error) {
		if err := lockAccount(ctx, tx, accountID); err != nil {
			return err
		}
		if p, err = scanProject(tx.QueryRowContext(ctx, insertProjectSQL, accountID, name)); err != nil {
			return err
		}
		return insertAudit(ctx, tx, AuditEvent{Actor: ActorAdmin, Action: "project.create",
			ProjectID: p.ID, AccountID: p.AccountID, Target: p.ID, Outcome: OutcomeOK})
	}))
}

const insertPrincipalSQL = `
	INSERT INTO principals (account_id, name) VALUES ($1, $2)
	RETURNING id, account_id, name, created_at`

// CreatePrincipal creates a principal in an existing account and audits it.
// An unknown account is a *RefusedError (ErrNotFound).
func (db *DB) CreatePrincipal(ctx context.Context, accountID, name string) (Principal, error) {
	var u Principal
	return result(&u, db.inTx(ctx, "create principal", func(ctx context.Context, tx *sql.Tx) error {
		if err := lockAccount(ctx, tx, accountID); err != nil {
			return err
		}
		if err := tx.QueryRowContext(ctx, insertPrincipalSQL, accountID, name).Scan(
			&u.ID, &u.AccountID, &u.Name, &u.CreatedAt); err != nil {
			return err
		}
		return insertAudit(ctx, tx, AuditEvent{Actor: ActorAdmin, Action: "principal.create",
			AccountID: u.AccountID, Target: u.ID, Outcome: OutcomeOK})
	}))
}

const insertMemberSQL = `
	INSERT INTO project_members (project_id, principal_id) VALUES ($1, $2)
	ON CONFLICT (project_id, principal_id) DO NOTHING
	RETURNING created_at`

// AddMember makes a principal a member of a project of the same account and
// audits it. An unknown project or principal, a principal of another account,
// or an existing membership is a *RefusedError.
func (db *DB) AddMember(ctx context.Context, projectID, principalID string) (Membership, error) {
	m := Membership{ProjectID: projectID, PrincipalID: principalID}
	return result(&m, db.inTx(ctx, "add member", func(ctx context.Context, tx *sql.Tx) error {
		p, u, err := lockSameAccount(ctx, tx, projectID, principalID)
		if err != nil {
			return err
		}
		if err = tx.QueryRowContext(ctx, insertMemberSQL, projectID, principalID).Scan(&m.CreatedAt); err != nil {
			return noRows(err, ErrConflict, "principal %s is already a member of project %s", principalID, projectID)
		}
		m.AccountID = p.AccountID
		return insertAudit(ctx, tx, AuditEvent{Actor: ActorAdmin, Action: "project_member.add",
			ProjectID: p.ID, AccountID: p.AccountID, Target: u.ID, Outcome: OutcomeOK})
	}))
}

// lockSameAccount locks a project and a principal of its account, as
// lockProject and lockPrincipal do. Because a project is the tenant
// boundary, membership never crosses accounts.
func lockSameAccount(ctx context.Context, tx *sql.Tx, projectID, principalID string) (Project, Principal, error) {
	p, err := lockProject(ctx, tx, projectID)
	if err != nil {
		return p, Principal{}, err
	}
	u, err := lockPrincipal(ctx, tx, principalID)
	if err == nil && u.AccountID != p.AccountID {
		err = refused(ErrInvalid, "principal %s belongs to account %s, not to account %s of project %s",
			u.ID, u.AccountID, p.AccountID, p.ID)
	}
	return p, u, err
}

// GetProject returns a project. An unknown project is a *RefusedError (ErrNotFound).
func (db *DB) GetProject(ctx context.Context, projectID string) (Project, error) {
	return txValue(ctx, db, "get project", func(ctx context.Context, tx *sql.Tx) (Project, error) {
		return lockProject(ctx, tx, projectID)
	})
}

// listAccountAuditSQL finds a project's events by their project too: a
// document read and a refused dispatch are written with the project alone,
// in the read's one statement, and belong to the account all the same.
const listAccountAuditSQL = `
	SELECT ` + auditEventColumns + `
	FROM audit_events
	WHERE (account_id = $1 OR project_id IN (SELECT id FROM projects WHERE account_id = $1)) AND at >= $2
	ORDER BY id
	LIMIT $3`

// ListAccountAudit returns up to limit audit events of an account (including
// those of its projects, whether or not their row names the account) since a
// time, oldest first. An unknown account is a *RefusedError (ErrNotFound).
func (db *DB) ListAccountAudit(ctx context.Context, accountID string, since time.Time, limit int) ([]AuditEvent, error) {
	return listIn(ctx, db, "list account audit", inAccount(accountID), scanAuditEvent, listAccountAuditSQL,
		accountID, since, limit)
}

// lockAccount checks that an account exists and keeps it from changing until
// the transaction ends.
func lockAccount(ctx context.Context, tx *sql.Tx, accountID string) error {
	var id string
	err := tx.QueryRowContext(ctx, `SELECT id FROM accounts WHERE id = $1 FOR KEY SHARE`, accountID).Scan(&id)
	return noRows(err, ErrNotFound, "account %s not found", accountID)
}

// lockProject returns a project and keeps it from changing until the
// transaction ends. An unknown project is a *RefusedError (ErrNotFound).
func lockProject(ctx context.Context, tx *sql.Tx, projectID string) (Project, error) {
	p, err := scanProject(tx.QueryRowContext(ctx, `SELECT `+projectColumns+` FROM projects
		WHERE id = $1 FOR KEY SHARE`, projectID))
	return result(&p, noRows(err, ErrNotFound, "project %s not found", projectID))
}

// scanProject reads one row of projectColumns.
func scanProject(row sqlScanner) (p Project, err error) {
	err = row.Scan(&p.ID, &p.AccountID, &p.Name, &p.CreatedAt)
	return p, err
}

// lockPrincipal returns a principal and keeps it from changing until the
// transaction ends. An unknown principal is a *RefusedError (ErrNotFound).
func lockPrincipal(ctx context.Context, tx *sql.Tx, principalID string) (Principal, error) {
	u, _, err := principalState(ctx, tx, principalID, "FOR KEY SHARE")
	return u, err
}
