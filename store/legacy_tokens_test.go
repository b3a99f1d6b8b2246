package store_test

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"heyaira/store"
	"heyaira/store/storetest"

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

// TestLT02LegacyTokenExpiry: a legacy token issued with ExpiresIn
// authenticates until then, by the caller's clock, and never after; one
// without it has no expiry. Lifetimes outside the bounds are refused.
func TestLT02LegacyTokenExpiry(t *testing.T) {
	t.Parallel()
	tr := newTree(t)
	ctx := t.Context()
	issue := func(secret string, in time.Duration) store.LegacyToken {
		t.Helper()
		tok, err := tr.db.IssueLegacyToken(ctx, store.NewLegacyToken{ProjectID: tr.project.ID, Name: secret,
			TokenHash: h(secret), Scopes: store.LegacyScopes, ExpiresIn: in})
		if err != nil {
			t.Fatalf("IssueLegacyToken(%s): %v", secret, err)
		}
		return tok
	}
	hour := issue("hyl_hour", time.Hour)
	forever := issue("hyl_forever", 0)
	if hour.ExpiresAt == nil || hour.ExpiresAt.Sub(hour.CreatedAt).Round(time.Second) != time.Hour {
		t.Errorf("ExpiresAt = %v, created %v: want one hour later", hour.ExpiresAt, hour.CreatedAt)
	}
	if forever.ExpiresAt != nil {
		t.Errorf("a token without ExpiresIn expires at %v", forever.ExpiresAt)
	}
	now := time.Now()
	for _, c := range []struct {
		secret string
		at     time.Time
		ok     bool
	}{
		{"hyl_hour", now, true},
		{"hyl_hour", hour.ExpiresAt.Add(-time.Second), true},
		{"hyl_hour", *hour.ExpiresAt, false},
		{"hyl_hour", now.Add(2 * time.Hour), false},
		{"hyl_forever", now.AddDate(20, 0, 0), true},
	} {
		a, err := tr.db.Authenticate(ctx, h(c.secret), c.at)
		switch {
		case c.ok && (err != nil || a.TokenID == "" || a.Kind != "legacy"):
			t.Errorf("%s at %v: %+v, %v; want it to authenticate", c.secret, c.at, a, err)
		case !c.ok && !errors.Is(err, store.ErrNotFound):
			t.Errorf("%s at %v: %+v, %v; want ErrNotFound", c.secret, c.at, a, err)
		}
	}
	before := auditRows(t, tr.db)
	for _, in := range []time.Duration{-time.Hour, time.Millisecond, store.MaxLegacyTokenLifetime + time.Second} {
		_, err := tr.db.IssueLegacyToken(ctx, store.NewLegacyToken{ProjectID: tr.project.ID, Name: "x",
			TokenHash: h("hyl_bad"), Scopes: store.LegacyScopes, ExpiresIn: in})
		wantRefused(t, err, store.ErrInvalid, "legacy token lifetime must be between 1s and "+store.MaxLegacyTokenLifetime.String())
	}
	if n := auditRows(t, tr.db); n != before {
		t.Errorf("refusals wrote %d audit rows", n-before)
	}
	// The schema refuses an expiry that is not after the creation.
	_, err := tr.db.SQL().ExecContext(ctx, `UPDATE legacy_tokens SET expires_at = created_at WHERE id = $1`, hour.ID)
	if !strings.Contains(fmt.Sprint(err), "check constraint") {
		t.Errorf("expires_at = created_at: %v, want a check violation", err)
	}
}

// TestLT03ExpiryMigratesAnOldDatabase: migrate adds legacy_tokens.expires_at
// to a database from before it; the tokens already there keep working,
// without expiry.
// Row LT-02 (docs/security-tests.md).
func TestLT03ExpiryMigratesAnOldDatabase(t *testing.T) {
	t.Parallel()
	tr := newTree(t)
	ctx := t.Context()
	if _, err := tr.db.SQL().ExecContext(ctx, `ALTER TABLE legacy_tokens DROP COLUMN expires_at`); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.db.SQL().ExecContext(ctx, `INSERT INTO legacy_tokens (project_id, name, token_hash, scopes)
		VALUES ($1, 'old', $2, ARRAY['memory:read'])`, tr.project.ID, h("hyl_old")); err != nil {
		t.Fatal(err)
	}
	if err := tr.db.Migrate(ctx, storetest.Schema(t)); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	a, err := tr.db.Authenticate(ctx, h("hyl_old"), time.Now().AddDate(50, 0, 0))
	if err != nil || a.Kind != "legacy" || a.ExpiresAt != nil {
		t.Errorf("old token after migrate: %+v, %v; want it live without expiry", a, err)
	}
}
