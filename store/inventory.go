package store

import (
	"context"
	"database/sql"
	"time"
)

// This file is the administrator's inventory: what accounts, projects,
// principals and memberships exist, without psql. Read only: no audit row.
// Every list is ordered by creation time, then id, so that its order is
// stable, and is never nil.

// AccountSummary is one account with the size of its tree.
type AccountSummary struct {
	ID         string    `json:"id"`
	Name       string    `json:"name"`
	CreatedAt  time.Time `json:"created_at"`
	Projects   int64     `json:"projects"`
	Principals int64     `json:"principals"`
}

// ProjectSummary is one project with its number of members.
type ProjectSummary struct {
	ID        string    `json:"id"`
	AccountID string    `json:"account_id"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
	Members   int64     `json:"members"`
}

// PrincipalSummary is one principal: its projects, whether it is disabled,
// and what it holds live (unrevoked grants, unexpired sessions).
type PrincipalSummary struct {
	ID           string     `json:"id"`
	AccountID    string     `json:"account_id"`
	Name         string     `json:"name"`
	CreatedAt    time.Time  `json:"created_at"`
	DisabledAt   *time.Time `json:"disabled_at"`
	ProjectIDs   []string   `json:"project_ids"`
	LiveGrants   int64      `json:"live_grants"`
	LiveSessions int64      `json:"live_sessions"`
}

// MemberSummary is one member of a project.
type MemberSummary struct {
	ProjectID     string     `json:"project_id"`
	PrincipalID   string     `json:"principal_id"`
	PrincipalName string     `json:"principal_name"`
	MemberSince   time.Time  `json:"member_since"`
	DisabledAt    *time.Time `json:"disabled_at"`
	LiveGrants    int64      `json:"live_grants"`
}

const listAccountsSQL = `
	SELECT a.id, a.name, a.created_at,
	       (SELECT count(*) FROM projects p WHERE p.account_id = a.id),
	       (SELECT count(*) FROM principals u WHERE u.account_id = a.id)
	FROM accounts a
	ORDER BY a.created_at, a.id`

// ListAccounts returns every account.
func (db *DB) ListAccounts(ctx context.Context) ([]AccountSummary, error) {
	out := []AccountSummary{}
	err := db.inTx(ctx, "list accounts", func(ctx context.Context, tx *sql.Tx) error {
		return scanAll(ctx, tx, listAccountsSQL, nil, func(rows *sql.Rows) error {
			var a AccountSummary
			err := rows.Scan(&a.ID, &a.Name, &a.CreatedAt, &a.Projects, &a.Principals)
			out = append(out, a)
			return err
		})
	})
	return out, err
}

const listProjectsSQL = `
	SELECT p.id, p.account_id, p.name, p.created_at,
	       (SELECT count(*) FROM project_members m WHERE m.project_id = p.id)
	FROM projects p
	WHERE $1 = '' OR p.account_id = NULLIF($1, '')::uuid
	ORDER BY p.created_at, p.id`

// ListProjects returns every project, or those of one account when
// accountID is not empty. An unknown account is a *RefusedError (ErrNotFound).
func (db *DB) ListProjects(ctx context.Context, accountID string) ([]ProjectSummary, error) {
	out := []ProjectSummary{}
	err := db.inTx(ctx, "list projects", func(ctx context.Context, tx *sql.Tx) error {
		if accountID != "" {
			if err := lockAccount(ctx, tx, accountID); err != nil {
				return err
			}
		}
		return scanAll(ctx, tx, listProjectsSQL, []any{accountID}, func(rows *sql.Rows) error {
			var p ProjectSummary
			err := rows.Scan(&p.ID, &p.AccountID, &p.Name, &p.CreatedAt, &p.Members)
			out = append(out, p)
			return err
		})
	})
	return out, err
}

const listPrincipalsSQL = `
	SELECT u.id, u.account_id, u.name, u.created_at, u.disabled_at,
	       ARRAY(SELECT m.project_id::text FROM project_members m WHERE m.principal_id = u.id
	             ORDER BY m.created_at, m.project_id),
	       (SELECT count(*) FROM oauth_grants g WHERE g.principal_id = u.id AND g.revoked_at IS NULL),
	       (SELECT count(*) FROM browser_sessions s
	        WHERE s.principal_id = u.id AND s.revoked_at IS NULL AND s.expires_at > now())
	FROM principals u
	WHERE u.account_id = $1
	ORDER BY u.created_at, u.id`

// ListPrincipals returns the principals of an account. An unknown account is
// a *RefusedError (ErrNotFound).
func (db *DB) ListPrincipals(ctx context.Context, accountID string) ([]PrincipalSummary, error) {
	out := []PrincipalSummary{}
	err := db.inTx(ctx, "list principals", func(ctx context.Context, tx *sql.Tx) error {
		if err := lockAccount(ctx, tx, accountID); err != nil {
			return err
		}
		return scanAll(ctx, tx, listPrincipalsSQL, []any{accountID}, func(rows *sql.Rows) error {
			var u PrincipalSummary
			var disabled sql.NullTime
			var projects stringArray
			err := rows.Scan(&u.ID, &u.AccountID, &u.Name, &u.CreatedAt, &disabled, &projects,
				&u.LiveGrants, &u.LiveSessions)
			u.DisabledAt, u.ProjectIDs = nullTime(disabled), append([]string{}, projects...)
			out = append(out, u)
			return err
		})
	})
	return out, err
}

const listMembersSQL = `
	SELECT m.project_id, u.id, u.name, m.created_at, u.disabled_at,
	       (SELECT count(*) FROM oauth_grants g
	        WHERE g.principal_id = u.id AND g.project_id = m.project_id AND g.revoked_at IS NULL)
	FROM project_members m JOIN principals u ON u.id = m.principal_id
	WHERE m.project_id = $1
	ORDER BY m.created_at, u.id`

// ListMembers returns the members of a project. An unknown project is a
// *RefusedError (ErrNotFound).
func (db *DB) ListMembers(ctx context.Context, projectID string) ([]MemberSummary, error) {
	out := []MemberSummary{}
	err := db.inTx(ctx, "list members", func(ctx context.Context, tx *sql.Tx) error {
		if _, err := lockProject(ctx, tx, projectID); err != nil {
			return err
		}
		return scanAll(ctx, tx, listMembersSQL, []any{projectID}, func(rows *sql.Rows) error {
			var m MemberSummary
			var disabled sql.NullTime
			err := rows.Scan(&m.ProjectID, &m.PrincipalID, &m.PrincipalName, &m.MemberSince, &disabled, &m.LiveGrants)
			m.DisabledAt = nullTime(disabled)
			out = append(out, m)
			return err
		})
	})
	return out, err
}

// scanAll runs a query and calls scan for each row.
func scanAll(ctx context.Context, tx *sql.Tx, q string, args []any, scan func(*sql.Rows) error) error {
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

func nullTime(t sql.NullTime) *time.Time {
	if !t.Valid {
		return nil
	}
	return &t.Time
}
