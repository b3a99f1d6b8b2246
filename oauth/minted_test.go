package oauth

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"
	"time"
)

var (
	keyA = bytes.Repeat([]byte{1}, 32)
	keyB = bytes.Repeat([]byte{2}, 32)
)

// TestSecretsRecogniseOnlyTheirOwn: a minted secret is valid for its own
// prefix until its embedded expiry and under every key of a rotation that
// holds the signing key; a changed bit, another prefix, a secret of the
// same shape with another body, or a key that is gone refuse it.
// Row JK-08 (docs/security-tests.md).
func TestSecretsRecogniseOnlyTheirOwn(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	old := NewSecrets([][]byte{keyA})
	rotated := NewSecrets([][]byte{keyB, keyA}) // B signs, A still verifies
	s := old.Mint(PrefixAccess, now.Add(time.Hour))
	if !strings.HasPrefix(s, PrefixAccess) || len(s) != len(PrefixAccess)+75 {
		t.Fatalf("minted %q: want hya_ and 75 characters", s)
	}
	for _, tc := range []struct {
		name   string
		sec    *Secrets
		v, pre string
		at     time.Time
		want   bool
	}{
		{"as minted", old, s, PrefixAccess, now, true},
		{"a second before its expiry", old, s, PrefixAccess, now.Add(time.Hour - time.Second), true},
		{"at its expiry", old, s, PrefixAccess, now.Add(time.Hour), false},
		{"after a rotation that keeps its key", rotated, s, PrefixAccess, now, true},
		{"once its key is gone", NewSecrets([][]byte{keyB}), s, PrefixAccess, now, false},
		{"as another type", old, PrefixRefresh + s[len(PrefixAccess):], PrefixRefresh, now, false},
		{"checked for another type", old, s, PrefixRefresh, now, false},
		{"with one character changed", old, s[:10] + string(s[10]^1) + s[11:], PrefixAccess, now, false},
		{"cut short", old, s[:len(s)-1], PrefixAccess, now, false},
		{"empty", old, "", PrefixAccess, now, false},
	} {
		if got := tc.sec.Valid(tc.v, tc.pre, tc.at); got != tc.want {
			t.Errorf("%s: Valid = %v, want %v", tc.name, got, tc.want)
		}
	}
	if n := rotated.Mint(PrefixAccess, time.Time{}); !rotated.Valid(n, PrefixAccess, now.Add(100*365*24*time.Hour)) ||
		old.Valid(n, PrefixAccess, now) {
		t.Error("a secret without expiry is valid for good, and only under the key that signed it (the first)")
	}
	if a, b := old.Mint(PrefixCode, now.Add(time.Minute)), old.Mint(PrefixCode, now.Add(time.Minute)); a == b {
		t.Error("two secrets minted alike are equal: the body is not random")
	}
}

// TestClientIDs: a registered client's public client_id carries its row id
// and a MAC; another id, or the row id itself, names no client.
// Row JK-08 (docs/security-tests.md).
func TestClientIDs(t *testing.T) {
	t.Parallel()
	s := NewSecrets([][]byte{keyA})
	const row = "7b0c1c3e-9b1e-4a53-9d7e-0d7c7b4c0a11"
	id := s.ClientID(row)
	if got, ok := s.ClientRow(id); !ok || got != row {
		t.Fatalf("ClientRow(ClientID(%s)) = %q, %v", row, got, ok)
	}
	for _, bad := range []string{row, id[:len(id)-2] + "AA", NewSecrets([][]byte{keyB}).ClientID(row), "made-up", ""} {
		if got, ok := s.ClientRow(bad); ok {
			t.Errorf("ClientRow(%q) = %q: a client_id this server never assigned names a row", bad, got)
		}
	}
}

// FuzzSecretsOpen: whatever the bytes, checking a presented value never
// panics and never accepts one that no key signed; what it accepts re-seals
// to the very same string, so a secret has one spelling.
// Row JK-08 (docs/security-tests.md).
func FuzzSecretsOpen(f *testing.F) {
	s := NewSecrets([][]byte{keyA, keyB})
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	for _, seed := range []string{s.Mint(PrefixAccess, now.Add(time.Hour)), s.Mint(PrefixLegacy, time.Time{}),
		s.ClientID("7b0c1c3e-9b1e-4a53-9d7e-0d7c7b4c0a11"), "hya_", "hya_" + strings.Repeat("A", 75), "hyd_x\n"} {
		f.Add(seed)
	}
	stranger := NewSecrets([][]byte{bytes.Repeat([]byte{3}, 32)})
	f.Fuzz(func(t *testing.T, v string) {
		for _, pre := range []string{PrefixAccess, PrefixLegacy, PrefixClient} {
			n := SecretBytes
			if pre == PrefixClient {
				n = uuidLen
			}
			payload, ok := s.open(v, pre, n, now)
			if !ok {
				continue
			}
			if stranger.Valid(v, pre, now) {
				t.Fatalf("%q verifies under a key that never signed it", v)
			}
			raw, _ := b64.DecodeString(v[len(pre):])
			exp := time.Time{}
			if e := raw[n : n+expiryLen]; !bytes.Equal(e, make([]byte, expiryLen)) {
				exp = time.Unix(int64(binary.BigEndian.Uint64(e)), 0)
			}
			for _, k := range s.keys {
				if again := (&Secrets{keys: [][]byte{k}}).seal(pre, payload, exp); again == v {
					return
				}
			}
			t.Fatalf("%q was accepted but re-seals to another string", v)
		}
	})
}
