package oauth

import (
	"strings"
	"testing"
)

// TestS256Vector is RFC 7636 Appendix B.
func TestS256Vector(t *testing.T) {
	t.Parallel()
	const verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
	const challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
	if got := S256(verifier); got != challenge {
		t.Fatalf("S256 = %q, want %q", got, challenge)
	}
	if !VerifyS256(verifier, challenge) {
		t.Fatal("VerifyS256 refused the RFC 7636 vector")
	}
}

// TestOA06VerifierSyntax: verifiers outside RFC 7636 §4.1 never verify,
// even when their hash would match.
func TestOA06VerifierSyntax(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		verifier string
		ok       bool
	}{
		{"43 chars", strings.Repeat("a", 43), true},
		{"128 chars", strings.Repeat("a", 128), true},
		{"42 chars", strings.Repeat("a", 42), false},
		{"129 chars", strings.Repeat("a", 129), false},
		{"plus sign", strings.Repeat("a", 42) + "+", false},
		{"equals sign", strings.Repeat("a", 42) + "=", false},
		{"space", strings.Repeat("a", 42) + " ", false},
		{"all unreserved", "AZaz09-._~" + strings.Repeat("b", 33), true},
		{"empty", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := ValidVerifier(tt.verifier); got != tt.ok {
				t.Errorf("ValidVerifier = %v, want %v", got, tt.ok)
			}
			// Even with its own (correct) challenge, a bad verifier fails.
			if got := VerifyS256(tt.verifier, S256(tt.verifier)); got != tt.ok {
				t.Errorf("VerifyS256(v, S256(v)) = %v, want %v", got, tt.ok)
			}
		})
	}
}

func TestOA04ChallengeSyntax(t *testing.T) {
	t.Parallel()
	good := S256(strings.Repeat("v", 43))
	tests := []struct {
		challenge string
		ok        bool
	}{
		{good, true},
		{good[:42], false},
		{good + "A", false},
		{good[:42] + "=", false},
		{good[:42] + "+", false},
		{strings.Repeat("A", 43), true},  // any canonical 32-byte base64url value
		{strings.Repeat("v", 43), false}, // non-zero padding bits: never an S256 output
		{"", false},
	}
	for _, tt := range tests {
		if got := ValidChallenge(tt.challenge); got != tt.ok {
			t.Errorf("ValidChallenge(%q) = %v, want %v", tt.challenge, got, tt.ok)
		}
	}
	if VerifyS256(strings.Repeat("w", 43), good) {
		t.Error("VerifyS256 accepted the wrong verifier")
	}
}
