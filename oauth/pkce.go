package oauth

import (
	"crypto/sha256"
	"crypto/subtle"
)

// MethodS256 is the only PKCE method accepted (OAuth 2.1 §4.1.1: plain is
// refused because it protects nothing once the request is observed).
const MethodS256 = "S256"

// ValidChallenge reports whether c can be an S256 code challenge: exactly
// 43 characters of unpadded base64url, the encoding of a SHA-256 digest.
func ValidChallenge(c string) bool {
	if len(c) != 43 {
		return false
	}
	b, err := b64.Strict().DecodeString(c)
	return err == nil && len(b) == sha256.Size
}

// ValidVerifier reports whether v is an RFC 7636 §4.1 code verifier:
// 43 to 128 characters from [A-Za-z0-9-._~].
func ValidVerifier(v string) bool {
	if len(v) < 43 || len(v) > 128 {
		return false
	}
	for i := 0; i < len(v); i++ {
		if !isUnreserved(v[i]) {
			return false
		}
	}
	return true
}

func isUnreserved(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

// S256 returns the S256 challenge of a verifier: base64url(SHA-256(verifier)).
func S256(verifier string) string {
	h := sha256.Sum256([]byte(verifier))
	return b64.EncodeToString(h[:])
}

// VerifyS256 reports whether verifier is well-formed and hashes to challenge.
// The comparison is constant-time, so timing reveals nothing about how much
// of a guessed verifier was right.
func VerifyS256(verifier, challenge string) bool {
	if !ValidVerifier(verifier) || !ValidChallenge(challenge) {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(S256(verifier)), []byte(challenge)) == 1
}
