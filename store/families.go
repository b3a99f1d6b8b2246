package store

import (
	"context"
	"database/sql"
	"time"
)

// This file bounds the token families of a grant and lists them. Every
// code redemption starts a family (an access token, usually with a refresh
// token that rotates within the family). A client that authorizes the same
// grant again, for a step-up of scope or from a new device, starts another,
// and the old one would otherwise stay valid until its refresh token
// expires. Clients that use a Client ID Metadata Document share one
// client_id, and so one grant, across all of a person's devices, so the
// older families cannot all be revoked on re-authorization: MaxLiveFamilies
// of them stay live, and beyond that the least recently used are revoked.

// MaxLiveFamilies is the number of live token families one grant keeps.
// Five covers a person's usual devices (laptop, desktop, a second client on
// each) while a client that re-authorizes over and over leaves at most four
// stale families behind, each revoked as soon as a sixth appears.
const MaxLiveFamilies = 5

// evictFamiliesSQL revokes every token of the live families of grant $1,
// other than family $2, beyond the MaxLiveFamilies - 1 most recently used
// ($4). A family is live while it has a usable token: unrevoked, unexpired
// and, for a refresh token, not yet rotated. It was last used when its
// newest token was issued (a rotation issues two).
const evictFamiliesSQL = `
	UPDATE oauth_tokens SET revoked_at = $3
	WHERE revoked_at IS NULL AND family_id IN (
		SELECT t.family_id FROM oauth_tokens t
		WHERE t.grant_id = $1 AND t.family_id <> $2::uuid AND t.revoked_at IS NULL AND t.expires_at > $3
		  AND NOT (t.kind = 'refresh' AND t.used_at IS NOT NULL)
		GROUP BY t.family_id
		ORDER BY max(t.created_at) DESC, t.family_id DESC
		OFFSET $4)`

// boundFamilies runs after a code redemption has stored family in grant: it
// revokes the least recently used families beyond MaxLiveFamilies and, if
// it revoked any, audits it in the same transaction.
func boundFamilies(ctx context.Context, tx *sql.Tx, out *Issued, now time.Time) error {
	n, err := execCount(ctx, tx, evictFamiliesSQL, out.GrantID, out.FamilyID, now, MaxLiveFamilies-1)
	if err != nil || n == 0 {
		return err
	}
	return insertProjectAudit(ctx, tx, AuditEvent{Actor: ActorClient(out.ClientID), Action: "oauth_family.evict",
		ProjectID: out.ProjectID, Target: out.GrantID, Outcome: OutcomeOK,
		Details: map[string]any{"new_family_id": out.FamilyID, "tokens_revoked": n, "max_live_families": MaxLiveFamilies}})
}

// FamilySummary is one live token family of a grant, as list-grants shows it.
type FamilySummary struct {
	ID string `json:"family_id"`
	// StartedAt is when the family's code was redeemed; LastUsedAt when its
	// newest token was issued (its last refresh).
	StartedAt  time.Time `json:"started_at"`
	LastUsedAt time.Time `json:"last_used_at"`
	// RefreshExpiresAt is when the family ends for good: the expiry of its
	// refresh token, nil for a family without one.
	RefreshExpiresAt *time.Time `json:"refresh_expires_at"`
	LiveTokens       int64      `json:"live_tokens"`
}

// listFamiliesSQL lists the live families of a project's grants, most
// recently used first, as evictFamiliesSQL orders them.
const listFamiliesSQL = `
	SELECT t.grant_id, t.family_id, min(t.created_at), max(t.created_at),
	       max(t.expires_at) FILTER (WHERE t.kind = 'refresh'), count(*)
	FROM oauth_tokens t JOIN oauth_grants g ON g.id = t.grant_id
	WHERE g.project_id = $1 AND t.revoked_at IS NULL AND t.expires_at > now()
	  AND NOT (t.kind = 'refresh' AND t.used_at IS NOT NULL)
	GROUP BY t.grant_id, t.family_id
	ORDER BY max(t.created_at) DESC, t.family_id DESC`

// addFamilies appends to the Families of grants, a project's grants indexed by id.
func addFamilies(ctx context.Context, tx *sql.Tx, projectID string, grants []GrantSummary, index map[string]int) error {
	return each(ctx, tx, func(row sqlScanner) error {
		var f FamilySummary
		var grantID string
		if err := row.Scan(&grantID, &f.ID, &f.StartedAt, &f.LastUsedAt, &f.RefreshExpiresAt, &f.LiveTokens); err != nil {
			return err
		}
		if i, ok := index[grantID]; ok {
			grants[i].Families = append(grants[i].Families, f)
		}
		return nil
	}, listFamiliesSQL, projectID)
}
