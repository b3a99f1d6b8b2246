package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// This file ends a person's access: removing a member from a project,
// disabling and enabling a principal, and ending browser sessions. Each is
// one transaction with its audit row. Nothing is cached outside the
// database: every request re-reads membership, grants, tokens and the
// principal's disabled_at (authenticateSQL, activeGrantSQL, selectSessionSQL),
// so a change here is in force on the next request of every replica.
//
// Lock order, the same as RevokeGrant's: the principal row, then grants,
// then tokens, sessions and links.

// MemberRemoval reports what RemoveMember changed.
type MemberRemoval struct {
	ProjectID     string    `json:"project_id"`
	PrincipalID   string    `json:"principal_id"`
	AccountID     string    `json:"account_id"`
	RemovedAt     time.Time `json:"removed_at"`
	GrantsRevoked int64     `json:"grants_revoked"`
	TokensRevoked int64     `json:"tokens_revoked"`
	// LinksRevoked counts the principal's unredeemed sign-in links: a link
	// is not tied to a project, so one made for the removed project is
	// revoked with the rest; the administrator makes a new one if the person
	// still belongs to another project.
	LinksRevoked int64 `json:"signin_links_revoked"`
	// MembersLeft counts the project's members after the removal: 0 means
	// only its legacy tokens can still reach it.
	MembersLeft int64 `json:"members_left"`
	// LiveLegacyTokens are the project's unrevoked, unexpired legacy
	// tokens. They belong to the project, not to the person, so the removal
	// leaves them working. The admin CLI prints them with their own JSON.
	LiveLegacyTokens []LegacyToken `json:"-"`
}

// PrincipalChange reports what DisablePrincipal, EnablePrincipal or
// RevokeSessions changed. The counts are zero for EnablePrincipal.
type PrincipalChange struct {
	PrincipalID     string     `json:"principal_id"`
	AccountID       string     `json:"account_id"`
	DisabledAt      *time.Time `json:"disabled_at"`
	GrantsRevoked   int64      `json:"grants_revoked"`
	TokensRevoked   int64      `json:"tokens_revoked"`
	SessionsRevoked int64      `json:"sessions_revoked"`
	LinksRevoked    int64      `json:"signin_links_revoked"`
	// LiveLegacyTokens, set by DisablePrincipal only, are the live legacy
	// tokens of the projects the principal is a member of: disabling a
	// person does not touch them (see MemberRemoval.LiveLegacyTokens).
	LiveLegacyTokens []LegacyToken `json:"-"`
}

// The statements of RemoveMember. The pair's tokens are revoked whether
// their grant is live or not.
const (
	deleteMemberSQL = `
		DELETE FROM project_members WHERE project_id = $1 AND principal_id = $2
		RETURNING created_at, now()`
	revokePairGrantsSQL = `
		UPDATE oauth_grants SET revoked_at = now(), updated_at = now()
		WHERE principal_id = $1 AND project_id = $2 AND revoked_at IS NULL`
	revokePairTokensSQL = `
		UPDATE oauth_tokens SET revoked_at = now()
		WHERE revoked_at IS NULL AND grant_id IN (
			SELECT id FROM oauth_grants WHERE principal_id = $1 AND project_id = $2)`
)

// RemoveMember ends a principal's membership of a project and revokes every
// grant and token of the principal in that project, in one transaction, and
// audits it. Once committed, no token of the pair authenticates, no refresh
// or code redeems (both re-check membership), and the consent page no longer
// offers the project. The project's live legacy tokens and the members left
// are reported, not changed. An unknown project or principal, a principal of
// another account, or a principal who is not a member is a *RefusedError.
func (db *DB) RemoveMember(ctx context.Context, projectID, principalID string) (MemberRemoval, error) {
	r := MemberRemoval{ProjectID: projectID, PrincipalID: principalID}
	return result(&r, db.inTx(ctx, "remove member", func(ctx context.Context, tx *sql.Tx) error {
		p, u, err := lockSameAccount(ctx, tx, projectID, principalID)
		if err != nil {
			return err
		}
		var since time.Time
		err = tx.QueryRowContext(ctx, deleteMemberSQL, projectID, principalID).Scan(&since, &r.RemovedAt)
		if err != nil {
			return noRows(err, ErrNotFound, "principal %s is not a member of project %s", principalID, projectID)
		}
		r.AccountID = p.AccountID
		if r.GrantsRevoked, err = execCount(ctx, tx, revokePairGrantsSQL, principalID, projectID); err != nil {
			return err
		}
		if r.TokensRevoked, err = execCount(ctx, tx, revokePairTokensSQL, principalID, projectID); err != nil {
			return err
		}
		if r.LinksRevoked, err = execCount(ctx, tx, revokeLinksSQL, principalID); err != nil {
			return err
		}
		if err = tx.QueryRowContext(ctx, `SELECT count(*) FROM project_members WHERE project_id = $1`,
			projectID).Scan(&r.MembersLeft); err != nil {
			return err
		}
		if r.LiveLegacyTokens, err = all(ctx, tx, scanLegacyToken, liveProjectLegacyTokensSQL, projectID); err != nil {
			return err
		}
		return insertAudit(ctx, tx, AuditEvent{Actor: ActorAdmin, Action: "project_member.remove",
			ProjectID: p.ID, AccountID: p.AccountID, Target: u.ID, Outcome: OutcomeOK,
			Details: map[string]any{"member_since": since, "grants_revoked": r.GrantsRevoked,
				"tokens_revoked": r.TokensRevoked, "signin_links_revoked": r.LinksRevoked,
				"members_left": r.MembersLeft, "live_legacy_tokens": len(r.LiveLegacyTokens)}})
	}))
}

// The statements that end everything a principal holds. revokeSessionsSQL
// is also revoke-sessions.
const (
	revokePrincipalGrantsSQL = `
		UPDATE oauth_grants SET revoked_at = now(), updated_at = now()
		WHERE principal_id = $1 AND revoked_at IS NULL`
	revokePrincipalTokensSQL = `
		UPDATE oauth_tokens SET revoked_at = now()
		WHERE revoked_at IS NULL AND grant_id IN (SELECT id FROM oauth_grants WHERE principal_id = $1)`
	revokeSessionsSQL = `
		UPDATE browser_sessions SET revoked_at = now()
		WHERE principal_id = $1 AND revoked_at IS NULL AND expires_at > now()`
	revokeLinksSQL = `
		UPDATE signin_links SET revoked_at = now()
		WHERE principal_id = $1 AND used_at IS NULL AND revoked_at IS NULL AND expires_at > now()`
)

// DisablePrincipal is the offboarding switch. In one transaction it marks
// the principal disabled and revokes all its grants (in every project),
// their tokens, its browser sessions and its unredeemed sign-in links, and
// audits it. While disabled, no sign-in link can be made or redeemed, no
// session is honoured and no authorization is approved. Memberships are
// kept, so enabling restores sign-in, not access: grants stay revoked. The
// live legacy tokens of its projects are reported, not revoked. An
// unknown or already disabled principal is a *RefusedError.
func (db *DB) DisablePrincipal(ctx context.Context, principalID string) (PrincipalChange, error) {
	var c PrincipalChange
	return result(&c, db.inTx(ctx, "disable principal", func(ctx context.Context, tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `UPDATE principals SET disabled_at = now()
			WHERE id = $1 AND disabled_at IS NULL RETURNING account_id, disabled_at`,
			principalID).Scan(&c.AccountID, &c.DisabledAt)
		if err != nil {
			return principalMissingOr(ctx, tx, err, principalID, "already disabled")
		}
		c.PrincipalID = principalID
		for _, s := range []struct {
			q string
			n *int64
		}{{revokePrincipalGrantsSQL, &c.GrantsRevoked}, {revokePrincipalTokensSQL, &c.TokensRevoked},
			{revokeSessionsSQL, &c.SessionsRevoked}, {revokeLinksSQL, &c.LinksRevoked}} {
			if *s.n, err = execCount(ctx, tx, s.q, principalID); err != nil {
				return err
			}
		}
		if c.LiveLegacyTokens, err = all(ctx, tx, scanLegacyToken, liveMemberLegacyTokensSQL, principalID); err != nil {
			return err
		}
		return insertAudit(ctx, tx, AuditEvent{Actor: ActorAdmin, Action: "principal.disable",
			AccountID: c.AccountID, Target: principalID, Outcome: OutcomeOK,
			Details: map[string]any{"grants_revoked": c.GrantsRevoked, "tokens_revoked": c.TokensRevoked,
				"sessions_revoked": c.SessionsRevoked, "signin_links_revoked": c.LinksRevoked,
				"live_legacy_tokens": len(c.LiveLegacyTokens)}})
	}))
}

// EnablePrincipal lets a disabled principal sign in again and audits it. It
// revives nothing: grants, tokens, sessions and links revoked by
// DisablePrincipal stay revoked. An unknown principal, or one that is not
// disabled, is a *RefusedError.
func (db *DB) EnablePrincipal(ctx context.Context, principalID string) (PrincipalChange, error) {
	c := PrincipalChange{PrincipalID: principalID}
	return result(&c, db.inTx(ctx, "enable principal", func(ctx context.Context, tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `UPDATE principals SET disabled_at = NULL
			WHERE id = $1 AND disabled_at IS NOT NULL RETURNING account_id`, principalID).Scan(&c.AccountID)
		if err != nil {
			return principalMissingOr(ctx, tx, err, principalID, "not disabled")
		}
		return insertAudit(ctx, tx, AuditEvent{Actor: ActorAdmin, Action: "principal.enable",
			AccountID: c.AccountID, Target: principalID, Outcome: OutcomeOK})
	}))
}

// RevokeSessions ends every live browser session of a principal (a lost
// laptop) and audits it, with the count, even when it is zero. Grants and
// tokens are left alone. An unknown principal is a *RefusedError.
func (db *DB) RevokeSessions(ctx context.Context, principalID string) (PrincipalChange, error) {
	c := PrincipalChange{PrincipalID: principalID}
	return result(&c, db.inTx(ctx, "revoke sessions", func(ctx context.Context, tx *sql.Tx) error {
		u, disabled, err := principalState(ctx, tx, principalID, "FOR KEY SHARE")
		if err != nil {
			return err
		}
		c.AccountID, c.DisabledAt = u.AccountID, disabled
		if c.SessionsRevoked, err = execCount(ctx, tx, revokeSessionsSQL, principalID); err != nil {
			return err
		}
		return insertAudit(ctx, tx, AuditEvent{Actor: ActorAdmin, Action: "browser_session.revoke",
			AccountID: c.AccountID, Target: principalID, Outcome: OutcomeOK,
			Details: map[string]any{"sessions_revoked": c.SessionsRevoked}})
	}))
}

// principalMissingOr explains why a conditional UPDATE of a principal
// matched nothing (err is sql.ErrNoRows): it does not exist, or it is in the
// state named by what. Any other err is returned as it is.
func principalMissingOr(ctx context.Context, tx *sql.Tx, err error, principalID, what string) error {
	if !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	if _, err := lockPrincipal(ctx, tx, principalID); err != nil {
		return err
	}
	return refused(ErrConflict, "principal %s is %s", principalID, what)
}

// lockEnabledPrincipal is lockPrincipal for the paths that start access
// (making or redeeming a sign-in link, approving an authorization). It takes
// a share lock, which waits for a DisablePrincipal in progress and then
// reads its result, so a link or grant can never slip past a disable. A
// disabled principal is a *RefusedError of the caller's kind, so each path
// answers as it does for any other refusal.
func lockEnabledPrincipal(ctx context.Context, tx *sql.Tx, principalID string, kind error) (Principal, error) {
	u, disabled, err := principalState(ctx, tx, principalID, "FOR SHARE")
	if err == nil && disabled != nil {
		return Principal{}, refused(kind, "principal %s is disabled", principalID)
	}
	return u, err
}

// principalState returns a principal and its disabled_at, locked with lock.
func principalState(ctx context.Context, tx *sql.Tx, principalID, lock string) (
	u Principal, disabled *time.Time, err error) {
	err = tx.QueryRowContext(ctx, `SELECT id, account_id, name, created_at, disabled_at FROM principals
		WHERE id = $1 `+lock, principalID).Scan(&u.ID, &u.AccountID, &u.Name, &u.CreatedAt, &disabled)
	if err != nil {
		return Principal{}, nil, noRows(err, ErrNotFound, "principal %s not found", principalID)
	}
	return u, disabled, nil
}
