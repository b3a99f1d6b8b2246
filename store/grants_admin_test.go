package store_test

import (
	"testing"

	"heyaira/store"

	"github.com/google/go-cmp/cmp"
)

// grantRows inserts, as the OAuth server would, a grant of the tree's
// principal and four tokens: access+refresh of family A, access+refresh of
// family B. It returns the grant and the token IDs in that order.
func grantRows(t *testing.T, tr tree) (grant string, tokens [4]string) {
	t.Helper()
	ctx := t.Context()
	var client string
	if err := tr.db.SQL().QueryRowContext(ctx, `INSERT INTO oauth_clients (client_name, redirect_uris)
		VALUES ('Inspector', ARRAY['http://127.0.0.1/cb']) RETURNING id`).Scan(&client); err != nil {
		t.Fatal(err)
	}
	if err := tr.db.SQL().QueryRowContext(ctx, `INSERT INTO oauth_grants (client_id, principal_id, project_id, scopes)
		VALUES ($1, $2, $3, ARRAY['tasks:read']) RETURNING id`, client, tr.principal.ID, tr.project.ID).Scan(&grant); err != nil {
		t.Fatal(err)
	}
	families := []string{"aaaaaaaa-0000-4000-8000-000000000000", "bbbbbbbb-0000-4000-8000-000000000000"}
	for i, kind := range []string{"access", "refresh", "access", "refresh"} {
		if err := tr.db.SQL().QueryRowContext(ctx, `INSERT INTO oauth_tokens
			(token_hash, kind, grant_id, scopes, resource, family_id, expires_at)
			VALUES (sha256(convert_to($1::text, 'UTF8')), $2, $3, ARRAY['tasks:read'], 'http://x/mcp', $4, now() + interval '1 hour')
			RETURNING id`, tokens[i]+kind+families[i/2], kind, grant, families[i/2]).Scan(&tokens[i]); err != nil {
			t.Fatal(err)
		}
	}
	return grant, tokens
}

// liveTokens returns which of ids are not revoked.
func liveTokens(t *testing.T, db *store.DB, ids ...string) []bool {
	t.Helper()
	out := make([]bool, len(ids))
	for i, id := range ids {
		if err := db.SQL().QueryRowContext(t.Context(), `SELECT revoked_at IS NULL FROM oauth_tokens WHERE id = $1`, id).Scan(&out[i]); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func TestGrantsAdmin(t *testing.T) {
	t.Parallel()
	tr := newTree(t)
	ctx := t.Context()
	grant, tok := grantRows(t, tr)

	gs, err := tr.db.ListGrants(ctx, tr.project.ID)
	if err != nil || len(gs) != 1 || len(gs[0].ActiveTokens) != 4 || gs[0].ClientName != "Inspector" ||
		gs[0].PrincipalName != "Ada" || gs[0].RevokedAt != nil {
		t.Fatalf("ListGrants = %+v, %v", gs, err)
	}

	// An access token goes alone.
	r, err := tr.db.RevokeOAuthToken(ctx, tok[0])
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(store.Revocation{ID: tok[0], Kind: "access", ProjectID: tr.project.ID, TokensRevoked: 1}, r, cmpIgnoreTime); diff != "" {
		t.Errorf("revoke access (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]bool{false, true, true, true}, liveTokens(t, tr.db, tok[:]...)); diff != "" {
		t.Errorf("live after revoking an access token (-want +got):\n%s", diff)
	}
	// A refresh token takes its whole family: here the refresh of family B and its access token.
	r, err = tr.db.RevokeOAuthToken(ctx, tok[3])
	if err != nil || r.Kind != "refresh" || r.TokensRevoked != 2 {
		t.Errorf("revoke refresh = %+v, %v; want 2 tokens", r, err)
	}
	if diff := cmp.Diff([]bool{false, true, false, false}, liveTokens(t, tr.db, tok[:]...)); diff != "" {
		t.Errorf("live after revoking a refresh token (-want +got):\n%s", diff)
	}
	_, err = tr.db.RevokeOAuthToken(ctx, tok[3])
	wantRefused(t, err, store.ErrConflict, "token "+tok[3]+" is already revoked")
	_, err = tr.db.RevokeOAuthToken(ctx, missingID)
	wantRefused(t, err, store.ErrNotFound, "token "+missingID+" not found")

	// The grant takes what is left.
	r, err = tr.db.RevokeGrant(ctx, grant)
	if err != nil || r.Kind != "grant" || r.TokensRevoked != 1 || r.ProjectID != tr.project.ID {
		t.Errorf("RevokeGrant = %+v, %v; want 1 token", r, err)
	}
	if diff := cmp.Diff([]bool{false, false, false, false}, liveTokens(t, tr.db, tok[:]...)); diff != "" {
		t.Errorf("live after revoking the grant (-want +got):\n%s", diff)
	}
	_, err = tr.db.RevokeGrant(ctx, grant)
	wantRefused(t, err, store.ErrConflict, "grant "+grant+" is already revoked")
	gs, err = tr.db.ListGrants(ctx, tr.project.ID)
	if err != nil || len(gs) != 1 || len(gs[0].ActiveTokens) != 0 || gs[0].RevokedAt == nil {
		t.Errorf("ListGrants after revocation = %+v, %v", gs, err)
	}
	if n := auditRows(t, tr.db); n != 3+3 {
		t.Errorf("%d audit rows, want 6 (3 creations, 3 revocations)", n)
	}
}

// TestBT03ListGrantsSkipsExchangedRefreshTokens: a refresh token that was
// already exchanged can never be exchanged again (a reuse revokes its
// family), so list-grants must not count it as active.
func TestBT03ListGrantsSkipsExchangedRefreshTokens(t *testing.T) {
	t.Parallel()
	tr := newTree(t)
	ctx := t.Context()
	_, tok := grantRows(t, tr)
	if _, err := tr.db.SQL().ExecContext(ctx, `UPDATE oauth_tokens SET used_at = now() WHERE id = $1`, tok[1]); err != nil {
		t.Fatal(err)
	}
	gs, err := tr.db.ListGrants(ctx, tr.project.ID)
	if err != nil || len(gs) != 1 {
		t.Fatalf("ListGrants = %+v, %v", gs, err)
	}
	var ids []string
	for _, a := range gs[0].ActiveTokens {
		ids = append(ids, a.ID)
	}
	if diff := cmp.Diff([]string{tok[0], tok[2], tok[3]}, ids); diff != "" {
		t.Errorf("active tokens (-want +got):\n%s", diff)
	}
}
