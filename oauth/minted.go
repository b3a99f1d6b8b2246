package oauth

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
	"encoding/hex"
	"time"
)

// Every secret the server issues, and the client_id dynamic registration
// assigns, is self-authenticating: its body carries a MAC under a server
// key over the body's random part (or, for a client_id, its row id) and its
// expiry. A presented value whose MAC does not verify, or whose embedded
// expiry has passed, is refused by Open alone, in time that does not depend
// on the value, so a made-up secret never reaches a parser, a limiter or the
// database. The database still decides whether a minted secret is valid
// (revoked, used, expired, offboarded): the MAC proves only that this server
// minted it.
//
// Format: prefix + base64url(payload || expiry || tag), where expiry is the
// big-endian Unix second after which the secret is refused (0: never) and
// tag the first 16 bytes of HMAC-SHA-256(key, "heyaira secret v1\0" ||
// prefix || "\0" || payload || expiry). The prefix is both the secret's
// visible type and its MAC label, so a secret of one type never verifies as
// another. An embedded expiry is never earlier than the stored one.

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

// ClientID returns the public client_id of the registered client whose row
// id is the UUID id.
func (s *Secrets) ClientID(id string) string {
	b, err := hex.DecodeString(stripUUID(id))
	if err != nil || len(b) != uuidLen {
		panic("oauth: ClientID of a malformed UUID")
	}
	return s.seal(PrefixClient, b, time.Time{})
}

// ClientRow returns the row id a public client_id names, or ok=false when
// this server never assigned it.
func (s *Secrets) ClientRow(clientID string) (id string, ok bool) {
	b, ok := s.open(clientID, PrefixClient, uuidLen, time.Time{})
	if !ok {
		return "", false
	}
	h := hex.EncodeToString(b)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:], true
}

func stripUUID(id string) string {
	if len(id) != 36 || id[8] != '-' || id[13] != '-' || id[18] != '-' || id[23] != '-' {
		return ""
	}
	return id[0:8] + id[9:13] + id[14:18] + id[19:23] + id[24:]
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

// open checks v against every key and returns its payload of n bytes. The
// work is the same whatever v holds, once its length and prefix are right
// (both public): every key's tag is computed and compared in constant time.
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
