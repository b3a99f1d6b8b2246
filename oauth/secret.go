package oauth

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/binary"
)

// Prefixes of the secrets this server issues. A prefix names the secret's
// type, so a leaked one is recognisable, and a secret of one type can never
// be the valid hash of another type's secret (CR-03).
const (
	PrefixAccess  = "hya_" // OAuth access token
	PrefixRefresh = "hyr_" // OAuth refresh token
	PrefixCode    = "hyc_" // authorization code
	PrefixSession = "hys_" // browser session cookie
	PrefixRequest = "hyq_" // pending authorization request handle
	PrefixCSRF    = "hyx_" // sign-in CSRF cookie
	PrefixLegacy  = "hyl_" // legacy static project token (heyaira-admin issue-legacy-token)
	PrefixSignin  = "hyk_" // one-time sign-in link token (heyaira-admin signin-link)
	PrefixClient  = "hyd_" // client_id assigned by dynamic registration
)

// SecretBytes is the entropy of every secret: 256 bits, above the 128 bits
// OAuth 2.1 §7.7 asks of codes and the 256 bits docs/design.md asks of access tokens.
const SecretBytes = 32

var b64 = base64.RawURLEncoding

// NewSecret returns prefix + base64url(32 bytes from crypto/rand): a
// browser-held random value that no store lookup ever takes (the sign-in
// CSRF cookie). Every secret the database knows is minted by Secrets.
// crypto/rand.Read never fails on supported platforms (Go 1.24+): it crashes
// the program rather than return predictable bytes.
func NewSecret(prefix string) string {
	b := make([]byte, SecretBytes)
	rand.Read(b)
	return prefix + b64.EncodeToString(b)
}

// Hash is how every secret is stored and looked up: the SHA-256 of the whole
// string, prefix included. Because only the hash reaches the database, a
// database dump yields no usable secret.
func Hash(secret string) []byte {
	h := sha256.Sum256([]byte(secret))
	return h[:]
}

// Equal compares two secrets in constant time (for equal lengths).
func Equal(a, b string) bool {
	return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

// MAC derives a token from a secret key, a domain label and some parts:
// base64url(HMAC-SHA-256(key, label || len(part) || part ...)). Because the
// parts are length-prefixed and the label separates uses, a token made for
// one purpose or one request is never valid for another. It is used for CSRF
// tokens bound to a browser secret the attacker cannot read.
func MAC(key, label string, parts ...string) string {
	m := hmac.New(sha256.New, []byte(key))
	m.Write([]byte(label))
	m.Write([]byte{0})
	var n [8]byte
	for _, p := range parts {
		binary.BigEndian.PutUint64(n[:], uint64(len(p)))
		m.Write(n[:])
		m.Write([]byte(p))
	}
	return b64.EncodeToString(m.Sum(nil))
}

// WellFormedSecret reports whether s looks like a secret made by NewSecret
// with the given prefix. It lets handlers refuse garbage before a lookup; it
// says nothing about validity.
func WellFormedSecret(s, prefix string) bool {
	if len(s) != len(prefix)+43 || s[:len(prefix)] != prefix {
		return false
	}
	b, err := b64.Strict().DecodeString(s[len(prefix):])
	return err == nil && len(b) == SecretBytes
}

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
	return len(v) >= 43 && len(v) <= 128 && only(v, alnum+"-._~")
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
