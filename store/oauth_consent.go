package store

import (
	"context"
	"database/sql"
	"slices"
	"time"

	"github.com/lib/pq"
)

// This file stores pending authorization requests and turns a principal's
// approval into a grant and a one-time code. Nothing the consent form sends
// is trusted: the client, redirect URI, PKCE challenge, resource and state
// come from the stored request; the principal from the session; the project
// must be one of the principal's; the scopes must be among those requested.

// AuthRequest is a validated authorization request waiting for consent.
type AuthRequest struct {
	ClientID    string
	RedirectURI string
	// RedirectURISent says the client sent redirect_uri (rather than
	// relying on its one registered URI); then /oauth/token requires it too.
	RedirectURISent bool
	CodeChallenge   string
	Scopes          []string
	Resource        string
	State           string // "" when the client sent none
	ExpiresAt       time.Time
	// PrincipalID is the signed-in principal the request was made for; Now
	// is the caller's clock. A principal has at most MaxPendingRequests
	// requests that are neither answered nor expired at Now.
	PrincipalID string
	Now         time.Time
}

// MaxPendingRequests bounds one principal's pending authorization requests:
// a consent page open in 20 tabs at once is more than a person uses, and
// each request expires within minutes.
const MaxPendingRequests = 20

const insertAuthRequestSQL = `
	INSERT INTO oauth_requests (handle_hash, client_id, redirect_uri, code_challenge, scopes, resource, state, expires_at, principal_id,
		redirect_uri_sent)
	VALUES ($1, $2, $3, $4, $5, $6, NULLIF($7, ''), $8, NULLIF($9, '')::uuid, $10)`

// CreateAuthRequest stores a pending request under the hash of its handle.
// Past MaxPendingRequests for r.PrincipalID it is a *QuotaError
// ("pending_requests") and nothing is stored; the count is taken under a
// per-principal lock, so concurrent requests cannot pass the bound together.
func (db *DB) CreateAuthRequest(ctx context.Context, handleHash []byte, r AuthRequest) error {
	if len(handleHash) != 32 {
		return refused(ErrInvalid, "request handle hash must be 32 bytes")
	}
	return db.inTx(ctx, "create auth request", func(ctx context.Context, tx *sql.Tx) error {
		if r.PrincipalID != "" {
			if err := checkPending(ctx, tx, r.PrincipalID, r.Now); err != nil {
				return err
			}
		}
		_, err := tx.ExecContext(ctx, insertAuthRequestSQL, handleHash, r.ClientID, r.RedirectURI,
			r.CodeChallenge, pq.Array(r.Scopes), r.Resource, r.State, r.ExpiresAt, r.PrincipalID, r.RedirectURISent)
		return err
	})
}

func checkPending(ctx context.Context, tx *sql.Tx, principalID string, now time.Time) error {
	if now.IsZero() {
		now = time.Now()
	}
	if err := advisoryLock(ctx, tx, quotaRequests, principalID); err != nil {
		return err
	}
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM oauth_requests
		WHERE principal_id = $1 AND used_at IS NULL AND expires_at > $2`, principalID, now).Scan(&n); err != nil {
		return err
	}
	if n >= MaxPendingRequests {
		return &QuotaError{Quota: "pending_requests", Limit: MaxPendingRequests}
	}
	return nil
}

// Approval is a principal's answer "yes" to a pending request.
type Approval struct {
	HandleHash  []byte
	PrincipalID string // from the session, never from the form
	ProjectID   string // from the form: checked against membership
	Scopes      []string
	CodeHash    []byte
	Now         time.Time
	CodeTTL     time.Duration
}

// Answered is where the browser goes after an approval or a denial.
type Answered struct {
	ClientID    string
	RedirectURI string
	State       string
	// Set only by ApproveAuthRequest:
	GrantID     string
	ProjectID   string
	Scopes      []string // the code's scopes: exactly what was approved
	GrantScopes []string // the grant's scopes after the approval
}

// consumeRequestSQL marks a pending request answered. Because the WHERE
// clause requires used_at IS NULL, two concurrent answers cannot both succeed.
const consumeRequestSQL = `
	UPDATE oauth_requests SET used_at = $2
	WHERE handle_hash = $1 AND used_at IS NULL AND expires_at > $2
	RETURNING client_id, redirect_uri, code_challenge, scopes, resource, COALESCE(state, ''), redirect_uri_sent`

// upsertGrantSQL creates the grant for (client, principal, project) or adds
// the approved scopes to the active one. It only runs on an explicit
// approval, so a grant never grows without consent.
const upsertGrantSQL = `
	INSERT INTO oauth_grants (client_id, principal_id, project_id, scopes)
	VALUES ($1, $2, $3, $4)
	ON CONFLICT (client_id, principal_id, project_id) WHERE revoked_at IS NULL
	DO UPDATE SET scopes = ARRAY(SELECT DISTINCT unnest(oauth_grants.scopes || EXCLUDED.scopes) ORDER BY 1),
	              updated_at = now()
	RETURNING id, scopes`

const insertCodeSQL = `
	INSERT INTO oauth_codes (code_hash, client_id, grant_id, redirect_uri, code_challenge, scopes, resource, expires_at,
		redirect_uri_sent)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`

// ApproveAuthRequest answers a pending request with an approval, in one
// transaction: it consumes the request, checks membership and scopes,
// creates or extends the grant, stores the code's hash bound to the client,
// redirect URI, PKCE challenge, approved scopes and resource, and audits it.
// A request that is unknown, expired or already answered is a *RefusedError
// (ErrNotFound); a project the principal is not a member of, or a disabled
// principal, is ErrNotFound; scopes that were not requested, or none at all,
// are ErrScopeExceeded. A refusal writes nothing and leaves the request pending.
func (db *DB) ApproveAuthRequest(ctx context.Context, a Approval) (Answered, error) {
	if len(a.CodeHash) != 32 {
		return Answered{}, refused(ErrInvalid, "code hash must be 32 bytes")
	}
	var out Answered
	return result(&out, db.inTx(ctx, "approve auth request", func(ctx context.Context, tx *sql.Tx) error {
		r, err := consumeRequest(ctx, tx, a.HandleHash, a.Now)
		if err != nil {
			return err
		}
		if len(a.Scopes) == 0 {
			return refused(ErrScopeExceeded, "no scope approved")
		}
		for _, s := range a.Scopes {
			if !slices.Contains(r.Scopes, s) {
				return refused(ErrScopeExceeded, "approved a scope that was not requested")
			}
		}
		account, err := lockMembership(ctx, tx, a.ProjectID, a.PrincipalID)
		if err != nil {
			return err
		}
		if _, err := lockEnabledPrincipal(ctx, tx, a.PrincipalID, ErrNotFound); err != nil {
			return err
		}
		var grantScopes []string
		if err := tx.QueryRowContext(ctx, upsertGrantSQL, r.ClientID, a.PrincipalID, a.ProjectID,
			pq.Array(a.Scopes)).Scan(&out.GrantID, pq.Array(&grantScopes)); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, insertCodeSQL, a.CodeHash, r.ClientID, out.GrantID, r.RedirectURI,
			r.CodeChallenge, pq.Array(a.Scopes), r.Resource, a.Now.Add(a.CodeTTL), r.RedirectURISent); err != nil {
			return err
		}
		out.ClientID, out.RedirectURI, out.State = r.ClientID, r.RedirectURI, r.State
		out.ProjectID, out.Scopes, out.GrantScopes = a.ProjectID, a.Scopes, grantScopes
		return insertAudit(ctx, tx, AuditEvent{Actor: ActorPrincipal(a.PrincipalID), Action: "oauth_grant.approve",
			ProjectID: a.ProjectID, AccountID: account, Target: out.GrantID, Outcome: OutcomeOK,
			Details: map[string]any{"client_id": r.ClientID, "scopes": a.Scopes, "grant_scopes": []string(grantScopes)}})
	}))
}

// consumeRequest runs consumeRequestSQL. An unknown, expired or answered
// request is a *RefusedError (ErrNotFound).
func consumeRequest(ctx context.Context, tx *sql.Tx, handleHash []byte, now time.Time) (r AuthRequest, err error) {
	err = tx.QueryRowContext(ctx, consumeRequestSQL, handleHash, now).Scan(&r.ClientID, &r.RedirectURI,
		&r.CodeChallenge, pq.Array(&r.Scopes), &r.Resource, &r.State, &r.RedirectURISent)
	return r, noRows(err, ErrNotFound, "authorization request unknown, expired or already answered")
}

// DenyAuthRequest answers a pending request with a denial and audits it.
// An unknown, expired or answered request is a *RefusedError (ErrNotFound).
func (db *DB) DenyAuthRequest(ctx context.Context, handleHash []byte, principalID string, now time.Time) (Answered, error) {
	var out Answered
	return result(&out, db.inTx(ctx, "deny auth request", func(ctx context.Context, tx *sql.Tx) error {
		r, err := consumeRequest(ctx, tx, handleHash, now)
		if err != nil {
			return err
		}
		out.ClientID, out.RedirectURI, out.State = r.ClientID, r.RedirectURI, r.State
		u, err := lockPrincipal(ctx, tx, principalID)
		if err != nil {
			return err
		}
		return insertAudit(ctx, tx, AuditEvent{Actor: ActorPrincipal(principalID), Action: "oauth_consent.deny",
			AccountID: u.AccountID, Target: out.ClientID, Outcome: "access_denied"})
	}))
}
