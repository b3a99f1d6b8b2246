package oauth

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
	"time"
)

// Every secret the server issues, and each client_id registration assigns,
// carries a MAC under a server key over its random part (a client_id: its
// row id) and its expiry, so a made-up or expired one is refused before any
// parse, limiter or lookup, in time that does not depend on the value. The
// database still decides whether a minted secret is valid (revoked, used,
// offboarded): the MAC proves only that this server minted it.
//
// Format: prefix + base64url(payload || expiry || tag): expiry is the
// big-endian Unix second from which it is refused (0: never, and never
// earlier than the stored expiry); tag is the first 16 bytes of
// HMAC-SHA-256(key, "heyaira secret v1\0" || prefix || "\0" || payload ||
// expiry). The prefix is the MAC's label, so no type verifies as another.

// KeyLabel names the keys Secrets uses among those derived from the cursor
// key file (cursor.Codec.Derive).
const KeyLabel = "secrets"

const (
	tagLen    = 16
	expiryLen = 8
	uuidLen   = 16
	macLabel  = "heyaira secret v1\x00"
)

// Secrets mints and recognises secrets under a list of keys: the first
// signs, every one verifies, so a key can be rotated as the cursor key is.
// It is immutable and safe for concurrent use.
type Secrets struct{ keys [][]byte }

// NewSecrets returns Secrets for keys (at least one; the first signs).
func NewSecrets(keys [][]byte) *Secrets {
	if len(keys) == 0 {
		panic("oauth: NewSecrets needs a key")
	}
	return &Secrets{keys: keys}
}

// Mint returns a new secret of the given type: 32 random bytes, refused
// after expires (never, when expires is zero).
func (s *Secrets) Mint(prefix string, expires time.Time) string {
	b := make([]byte, SecretBytes)
	rand.Read(b)
	return s.seal(prefix, b, expires)
}

// Valid reports whether v is a secret of the given type that this server
// minted and whose embedded expiry has not passed at now.
func (s *Secrets) Valid(v, prefix string, now time.Time) bool {
	_, ok := s.open(v, prefix, SecretBytes, now)
	return ok
}

func (s *Secrets) seal(prefix string, payload []byte, expires time.Time) string {
	b := make([]byte, len(payload)+expiryLen, len(payload)+expiryLen+tagLen)
	copy(b, payload)
	if !expires.IsZero() {
		sec := expires.Unix()
		if expires.Nanosecond() != 0 {
			sec++ // never earlier than the stored expiry
		}
		binary.BigEndian.PutUint64(b[len(payload):], uint64(sec))
	}
	return prefix + b64.EncodeToString(append(b, tag(s.keys[0], prefix, b)...))
}

// open checks v against every key and returns its payload of n bytes. Once
// its length and prefix (both public) are right, every key's tag is
// computed and compared in constant time, whatever v holds.
func (s *Secrets) open(v, prefix string, n int, now time.Time) ([]byte, bool) {
	raw := n + expiryLen + tagLen
	if len(v) != len(prefix)+b64.EncodedLen(raw) || v[:len(prefix)] != prefix {
		return nil, false
	}
	b, err := b64.Strict().DecodeString(v[len(prefix):])
	if err != nil || len(b) != raw {
		return nil, false
	}
	body, got := b[:n+expiryLen], b[n+expiryLen:]
	match := 0
	for _, k := range s.keys {
		match |= subtle.ConstantTimeCompare(tag(k, prefix, body), got)
	}
	exp := binary.BigEndian.Uint64(body[n:])
	if match != 1 || (exp != 0 && now.Unix() >= int64(exp)) {
		return nil, false
	}
	return body[:n], true
}

func tag(key []byte, prefix string, body []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(macLabel + prefix + "\x00"))
	m.Write(body)
	return m.Sum(nil)[:tagLen]
}
