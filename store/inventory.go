package store

import (
	"context"
	"time"

	"github.com/lib/pq"
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
	return listIn(ctx, db, "list accounts", nil, func(row sqlScanner) (a AccountSummary, err error) {
		err = row.Scan(&a.ID, &a.Name, &a.CreatedAt, &a.Projects, &a.Principals)
		return a, err
	}, listAccountsSQL)
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
	lock := inAccount(accountID)
	if accountID == "" {
		lock = nil
	}
	return listIn(ctx, db, "list projects", lock, func(row sqlScanner) (p ProjectSummary, err error) {
		err = row.Scan(&p.ID, &p.AccountID, &p.Name, &p.CreatedAt, &p.Members)
		return p, err
	}, listProjectsSQL, accountID)
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
	scan := func(row sqlScanner) (u PrincipalSummary, err error) {
		err = row.Scan(&u.ID, &u.AccountID, &u.Name, &u.CreatedAt, &u.DisabledAt,
			pq.Array(&u.ProjectIDs), &u.LiveGrants, &u.LiveSessions)
		u.ProjectIDs = append([]string{}, u.ProjectIDs...)
		return u, err
	}
	return listIn(ctx, db, "list principals", inAccount(accountID), scan, listPrincipalsSQL, accountID)
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
	scan := func(row sqlScanner) (m MemberSummary, err error) {
		err = row.Scan(&m.ProjectID, &m.PrincipalID, &m.PrincipalName, &m.MemberSince, &m.DisabledAt,
			&m.LiveGrants)
		return m, err
	}
	return listIn(ctx, db, "list members", inProject(projectID), scan, listMembersSQL, projectID)
}
