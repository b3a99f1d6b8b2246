package cursor

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// ParseKeys parses the contents of the cursor key file and returns a codec
// for its keys. The file holds one key per line, the signing key first. A
// line is either hex (64 or more digits; a line of hex digits only is always
// read as hex) or base64 (standard or URL alphabet, with or without padding)
// of at least MinKeyLen bytes. Surrounding spaces, blank lines and lines
// starting with '#' are ignored.
//
// Errors name the line, never its contents. Checking that the file is
// protected (mode, owner) is the caller's job: ParseKeys sees only bytes.
func ParseKeys(data []byte) (*Codec, error) {
	var keys [][]byte
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, err := parseKeyLine(line)
		if err != nil {
			return nil, fmt.Errorf("cursor: key file line %d: %w", i+1, err)
		}
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		return nil, errors.New("cursor: key file holds no key")
	}
	return NewCodec(keys...)
}

// keyEncodings are tried in turn. At most one can succeed on a given line
// with different bytes: the alphabets differ only in "+/" versus "-_", and
// padding is either required or refused.
var keyEncodings = []*base64.Encoding{
	base64.StdEncoding.Strict(),
	base64.RawStdEncoding.Strict(),
	base64.URLEncoding.Strict(),
	base64.RawURLEncoding.Strict(),
}

func parseKeyLine(line string) ([]byte, error) {
	if strings.ContainsAny(line, " \t\r\v\f") {
		return nil, errors.New("space inside the key")
	}
	var k []byte
	// A line of hex digits only is read as hex, whatever its length, so that
	// a short hex key is refused instead of being read as base64 (hex digits
	// are base64 characters too). A random base64 key of 32+ bytes made of
	// hex digits only has odds below 2^-66.
	if strings.Trim(line, "0123456789abcdefABCDEF") == "" {
		var err error
		if k, err = hex.DecodeString(line); err != nil {
			return nil, errors.New("odd number of hex digits")
		}
	} else {
		for _, enc := range keyEncodings {
			if b, err := enc.DecodeString(line); err == nil {
				k = b
				break
			}
		}
		if k == nil {
			return nil, errors.New("not base64 or hex")
		}
	}
	if len(k) < MinKeyLen {
		return nil, fmt.Errorf("key is %d bytes, need at least %d", len(k), MinKeyLen)
	}
	return k, nil
}

// KeyIDs returns the hex key ids, signing key first. They are safe to log.
func (c *Codec) KeyIDs() []string {
	ids := make([]string, len(c.keys))
	for i, k := range c.keys {
		ids[i] = fmt.Sprintf("%x", k.id)
	}
	return ids
}

// String describes the codec without its keys, so that printing or logging a
// Codec cannot leak them.
func (c *Codec) String() string {
	return fmt.Sprintf("cursor.Codec{keys: %d, signing key id: %x}", len(c.keys), c.keys[0].id)
}

// GoString is String, for %#v.
func (c *Codec) GoString() string { return c.String() }

// Derive returns, for each key in order (the signing key first), a 32-byte
// key for another use of the same key file, named by label:
// HMAC-SHA-256(key, "heyaira derive v1\x00" || label). A derived key reveals
// nothing of the key it came from, and keys derived under different labels,
// or the cursor MAC itself, are unrelated; so one key file serves several
// uses and is rotated for all of them at once.
func (c *Codec) Derive(label string) [][]byte {
	out := make([][]byte, len(c.keys))
	for i, k := range c.keys {
		m := hmac.New(sha256.New, k.secret)
		m.Write([]byte("heyaira derive v1\x00" + label))
		out[i] = m.Sum(nil)
	}
	return out
}
