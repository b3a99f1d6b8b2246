package store_test

import (
	"crypto/sha256"
	"testing"

	"heyaira/store"

	"github.com/google/go-cmp/cmp"
)

func TestLegacyTokens(t *testing.T) {
	t.Parallel()
	tr := newTree(t)
	ctx := t.Context()
	hash := sha256.Sum256([]byte("hyl_example"))
	tok, err := tr.db.IssueLegacyToken(ctx, store.NewLegacyToken{ProjectID: tr.project.ID, Name: "ci",
		TokenHash: hash[:], Scopes: store.LegacyScopes})
	if err != nil {
		t.Fatalf("IssueLegacyToken: %v", err)
	}
	want := store.LegacyToken{ID: tok.ID, ProjectID: tr.project.ID, Name: "ci", Scopes: store.LegacyScopes}
	if diff := cmp.Diff(want, tok, cmpIgnoreTime); diff != "" {
		t.Errorf("IssueLegacyToken (-want +got):\n%s", diff)
	}

	before := auditRows(t, tr.db)
	other := sha256.Sum256([]byte("hyl_other"))
	refusals := []struct {
		name string
		in   store.NewLegacyToken
		kind error
		msg  string
	}{
		{"documents:read", store.NewLegacyToken{ProjectID: tr.project.ID, Name: "x", TokenHash: other[:],
			Scopes: []string{"memory:read", "documents:read"}}, store.ErrInvalid, `scope "documents:read" is not allowed on a legacy token`},
		{"workflows:write", store.NewLegacyToken{ProjectID: tr.project.ID, Name: "x", TokenHash: other[:],
			Scopes: []string{"workflows:write"}}, store.ErrInvalid, `scope "workflows:write" is not allowed on a legacy token`},
		{"no scope", store.NewLegacyToken{ProjectID: tr.project.ID, Name: "x", TokenHash: other[:]},
			store.ErrInvalid, "legacy token needs at least one scope"},
		{"token instead of hash", store.NewLegacyToken{ProjectID: tr.project.ID, Name: "x",
			TokenHash: []byte("hyl_a-token-not-its-hash"), Scopes: store.LegacyScopes}, store.ErrInvalid, "legacy token hash must be 32 bytes"},
		{"unknown project", store.NewLegacyToken{ProjectID: missingID, Name: "x", TokenHash: other[:],
			Scopes: store.LegacyScopes}, store.ErrNotFound, "project " + missingID + " not found"},
	}
	for _, tt := range refusals {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tr.db.IssueLegacyToken(ctx, tt.in)
			wantRefused(t, err, tt.kind, tt.msg)
		})
	}
	// The same hash twice is a unique violation, not a second token.
	if _, err := tr.db.IssueLegacyToken(ctx, store.NewLegacyToken{ProjectID: tr.project.ID, Name: "dup",
		TokenHash: hash[:], Scopes: store.LegacyScopes[:1]}); err == nil {
		t.Error("a second token with the same hash was stored")
	}
	if n := auditRows(t, tr.db); n != before {
		t.Errorf("refusals wrote %d audit rows", n-before)
	}

	r, err := tr.db.RevokeLegacyToken(ctx, tok.ID)
	if err != nil || r.RevokedAt == nil {
		t.Fatalf("RevokeLegacyToken = %+v, %v", r, err)
	}
	_, err = tr.db.RevokeLegacyToken(ctx, tok.ID)
	wantRefused(t, err, store.ErrConflict, "legacy token "+tok.ID+" is already revoked")
	_, err = tr.db.RevokeLegacyToken(ctx, missingID)
	wantRefused(t, err, store.ErrNotFound, "legacy token "+missingID+" not found")

	list, err := tr.db.ListLegacyTokens(ctx, tr.project.ID)
	if err != nil {
		t.Fatal(err)
	}
	want.RevokedAt = r.RevokedAt
	if diff := cmp.Diff([]store.LegacyToken{want}, list, cmpIgnoreTime); diff != "" {
		t.Errorf("ListLegacyTokens (-want +got):\n%s", diff)
	}
}
