package cursor

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"time"
)

// ErrInvalid is returned by Decode for any cursor that is not one the codec's
// keys produced: malformed, altered, truncated, signed with an unknown key, or
// of an unknown version. It carries no detail, so it never echoes the cursor.
var ErrInvalid = errors.New("cursor: invalid")

// ErrExpired is returned by Decode for an authentic cursor whose expiry has
// passed. Only a cursor with a valid MAC can get it.
var ErrExpired = errors.New("cursor: expired")

// Cursor is what a cursor says. Kind separates uses: "document" for
// git_document_get, "memory_list" and "task_list" for pagination (for those,
// Path holds the last key or id seen and Source, Commit and FileSHA256 are
// empty).
type Cursor struct {
	Kind, Project, Principal, Source, Commit, Path string
	Offset                                         int64
	FileSHA256                                     string    // lowercase hex of the whole file
	Expires                                        time.Time // second precision; Decode returns it in UTC
}

const (
	// MaxLen is the longest cursor string Decode accepts, checked before any
	// decoding. It leaves room for 3005 bytes of string fields in total.
	MaxLen = 4096

	// MinKeyLen is the shortest key NewCodec and ParseKeys accept, in bytes.
	MinKeyLen = 32

	version   = 1
	label     = "heyaira cursor v1\x00"
	idLen     = 4
	macLen    = sha256.Size
	headerLen = 1 + idLen
	// minRawLen is a cursor whose seven strings are all empty.
	minRawLen = headerLen + 7*2 + 8 + 8 + macLen
	maxRawLen = MaxLen / 4 * 3

	// maxUnix bounds Expires to 1970-01-01 … 9999-12-31T23:59:59Z, because
	// time.Unix(s, 0).Unix() == s holds there, so a decoded cursor re-encodes
	// to the same bytes.
	maxUnix = 253402300799
)

// b64 is strict: it refuses padding and non-zero trailing bits, which would
// otherwise give one cursor several spellings. It still skips '\r' and '\n',
// so decode checks the alphabet first.
var b64 = base64.RawURLEncoding.Strict()

const b64Alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

// Internal reasons, kept apart for the test vectors. Decode folds all of them
// into ErrInvalid.
var (
	errMalformed = errors.New("cursor: malformed")
	errBadMAC    = errors.New("cursor: bad mac")
)

type key struct {
	id     [idLen]byte
	secret []byte
}

// Codec encodes and decodes cursors with a fixed set of keys.
type Codec struct {
	keys []*key // keys[0] signs
	byID map[[idLen]byte]*key
}

// NewCodec returns a codec for keys, each at least MinKeyLen bytes; the first
// signs and all verify. The keys are copied. Two equal keys (or, with odds of
// 2^-32, two keys with the same id) are an error.
func NewCodec(keys ...[]byte) (*Codec, error) {
	if len(keys) == 0 {
		return nil, errors.New("cursor: no keys")
	}
	c := &Codec{byID: make(map[[idLen]byte]*key, len(keys))}
	for i, secret := range keys {
		if len(secret) < MinKeyLen {
			return nil, fmt.Errorf("cursor: key %d is %d bytes, need at least %d", i+1, len(secret), MinKeyLen)
		}
		k := &key{id: keyID(secret), secret: append([]byte(nil), secret...)}
		if _, dup := c.byID[k.id]; dup {
			// Because verification picks the key by id, ids must be unique.
			return nil, fmt.Errorf("cursor: key %d repeats an earlier key id", i+1)
		}
		c.byID[k.id] = k
		c.keys = append(c.keys, k)
	}
	return c, nil
}

func keyID(secret []byte) [idLen]byte {
	sum := sha256.Sum256(secret)
	return [idLen]byte(sum[:idLen])
}

// Encode returns the cursor string for cur, signed with the first key.
// Expires is truncated to the second.
//
// Encode panics if the result could never be decoded: a negative Offset,
// Expires outside the years 1970–9999, or a cursor longer than MaxLen. These
// are programming errors; callers bound their fields.
func (c *Codec) Encode(cur Cursor) string {
	return c.keys[0].encode(cur)
}

func (k *key) encode(cur Cursor) string {
	if cur.Offset < 0 {
		panic("cursor: Encode with negative Offset")
	}
	exp := cur.Expires.Unix()
	if exp < 0 || exp > maxUnix {
		panic("cursor: Encode with Expires outside 1970–9999")
	}
	fields := cur.fields()
	n := minRawLen
	for _, f := range fields {
		n += len(*f)
	}
	// This also keeps every length below 2^16, so uint16 cannot truncate.
	if n > maxRawLen {
		panic("cursor: Encode result longer than MaxLen")
	}
	raw := make([]byte, 0, n)
	raw = append(raw, version)
	raw = append(raw, k.id[:]...)
	for _, f := range fields {
		raw = binary.BigEndian.AppendUint16(raw, uint16(len(*f)))
		raw = append(raw, *f...)
	}
	raw = binary.BigEndian.AppendUint64(raw, uint64(cur.Offset))
	raw = binary.BigEndian.AppendUint64(raw, uint64(exp))
	raw = k.mac(raw, raw)
	return b64.EncodeToString(raw)
}

// fields lists the string fields in wire order.
func (cur *Cursor) fields() [7]*string {
	return [7]*string{&cur.Kind, &cur.Project, &cur.Principal, &cur.Source, &cur.Commit, &cur.Path, &cur.FileSHA256}
}

// mac appends HMAC-SHA-256(secret, label | msg) to dst.
func (k *key) mac(dst, msg []byte) []byte {
	m := hmac.New(sha256.New, k.secret)
	m.Write([]byte(label)) // domain separation: this key's MACs mean "cursor v1"
	m.Write(msg)
	return m.Sum(dst)
}

// Decode verifies s and returns what it says. It returns ErrInvalid or
// ErrExpired and nothing else; on error the Cursor is zero. A cursor is
// expired when now is at or after its Expires.
func (c *Codec) Decode(s string, now time.Time) (Cursor, error) {
	cur, err := c.decode(s, now)
	if err != nil && err != ErrExpired {
		return Cursor{}, ErrInvalid
	}
	return cur, err
}

// decode is Decode with the reason kept: errMalformed, errBadMAC or
// ErrExpired. On error the Cursor is zero.
func (c *Codec) decode(s string, now time.Time) (Cursor, error) {
	// The length cap comes first, because it bounds all the work below.
	// Then only the 64 characters of the alphabet: b64 would skip a newline.
	if len(s) > MaxLen || strings.Trim(s, b64Alphabet) != "" {
		return Cursor{}, errMalformed
	}
	raw, err := b64.DecodeString(s)
	if err != nil || len(raw) < minRawLen || raw[0] != version {
		return Cursor{}, errMalformed
	}
	k := c.byID[[idLen]byte(raw[1:headerLen])]
	if k == nil {
		return Cursor{}, errBadMAC
	}
	n := len(raw) - macLen
	// hmac.Equal takes time independent of where the MACs differ, so timing
	// tells an attacker nothing about how close a forgery came.
	if !hmac.Equal(raw[n:], k.mac(nil, raw[:n])) {
		return Cursor{}, errBadMAC
	}
	// From here on the bytes are authentic: they are our own Encode's output
	// unless a key leaked. The checks below keep Decode total and canonical.
	cur, ok := parseBody(raw[headerLen:n])
	if !ok {
		return Cursor{}, errMalformed
	}
	if !now.Before(cur.Expires) {
		return Cursor{}, ErrExpired
	}
	return cur, nil
}

// parseBody parses the body exactly as encode writes it: seven
// length-prefixed strings, offset ≥ 0, expires within maxUnix, and nothing
// after.
func parseBody(b []byte) (Cursor, bool) {
	all := string(b) // one copy; the fields are substrings of it
	var cur Cursor
	i := 0
	for _, f := range cur.fields() {
		if len(b)-i < 2 {
			return Cursor{}, false
		}
		n := int(binary.BigEndian.Uint16(b[i:]))
		i += 2
		if len(b)-i < n {
			return Cursor{}, false
		}
		*f = all[i : i+n]
		i += n
	}
	if len(b)-i != 16 {
		return Cursor{}, false
	}
	cur.Offset = int64(binary.BigEndian.Uint64(b[i:]))
	exp := int64(binary.BigEndian.Uint64(b[i+8:]))
	if cur.Offset < 0 || exp < 0 || exp > maxUnix {
		return Cursor{}, false
	}
	cur.Expires = time.Unix(exp, 0).UTC()
	return cur, true
}
