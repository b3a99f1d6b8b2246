package store_test

import (
	"crypto/sha256"
	"testing"
	"time"

	"heyaira/store"
)

func TestSigninLinks(t *testing.T) {
	t.Parallel()
	tr := newTree(t)
	ctx := t.Context()
	hash := sha256.Sum256([]byte("secret"))
	l, err := tr.db.CreateSigninLink(ctx, tr.principal.ID, hash[:], store.SigninLinkTTL)
	if err != nil {
		t.Fatalf("CreateSigninLink: %v", err)
	}
	// The expiry comes from the database clock, as the redeeming server reads it.
	if got := l.ExpiresAt.Sub(l.CreatedAt); got != 15*time.Minute || l.PrincipalID != tr.principal.ID {
		t.Errorf("link %+v: lifetime %v, want 15m for %s", l, got, tr.principal.ID)
	}
	var stored []byte
	if err := tr.db.SQL().QueryRowContext(ctx, `SELECT token_hash FROM signin_links WHERE id = $1`, l.ID).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if string(stored) != string(hash[:]) {
		t.Errorf("stored hash %x, want %x", stored, hash)
	}

	before := auditRows(t, tr.db)
	other := sha256.Sum256([]byte("other"))
	_, err = tr.db.CreateSigninLink(ctx, missingID, other[:], store.SigninLinkTTL)
	wantRefused(t, err, store.ErrNotFound, "principal "+missingID+" not found")
	_, err = tr.db.CreateSigninLink(ctx, tr.principal.ID, []byte("secret"), store.SigninLinkTTL)
	wantRefused(t, err, store.ErrInvalid, "sign-in link hash must be 32 bytes")
	_, err = tr.db.CreateSigninLink(ctx, tr.principal.ID, other[:], 0)
	wantRefused(t, err, store.ErrInvalid, "sign-in link lifetime must be positive")
	if n := auditRows(t, tr.db); n != before {
		t.Errorf("refusals wrote %d audit rows", n-before)
	}
}
