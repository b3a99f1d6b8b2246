package admin

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
)

// secretBytes is the entropy of every secret the admin CLI makes (256 bits).
const secretBytes = 32

// legacyTokenPrefix marks legacy static project tokens, so that a leaked one
// is easy to recognise (and to scan for) and is never mistaken for an OAuth token.
const legacyTokenPrefix = "hyl_"

// newSecret returns prefix + base64url(32 random bytes) and the SHA-256 of
// that whole string. Only the hash goes to the database; the caller prints the
// secret once and keeps no copy. The server hashes what a client presents the
// same way and compares hashes.
func newSecret(prefix string) (secret string, hash []byte) {
	b := make([]byte, secretBytes)
	// crypto/rand.Read never fails on supported platforms (Go 1.24+): it
	// crashes the program rather than return predictable bytes.
	rand.Read(b)
	secret = prefix + base64.RawURLEncoding.EncodeToString(b)
	sum := sha256.Sum256([]byte(secret))
	return secret, sum[:]
}
