package github

import (
	"bytes"
	"crypto/sha1"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// contentsObject is the part of a contents response (media type
// application/vnd.github.object+json) that is checked. Unknown fields are
// ignored because GitHub adds fields without a version change.
type contentsObject struct {
	Type     string     `json:"type"`
	Encoding *string    `json:"encoding"`
	Size     *int64     `json:"size"`
	Path     *string    `json:"path"`
	SHA      string     `json:"sha"`
	Content  rawContent `json:"content"`
}

// rawContent keeps the undecoded JSON of "content". json.Unmarshal hands
// UnmarshalJSON a slice of its input, which decodeContents owns and which
// json never writes to, so keeping it avoids copying a 1.4 MB string; and
// even if json passed a copy, keeping it would still be correct.
type rawContent struct {
	raw []byte // nil when the field is absent
}

// UnmarshalJSON implements json.Unmarshaler.
func (r *rawContent) UnmarshalJSON(b []byte) error {
	r.raw = b
	return nil
}

// decodeContents parses and verifies one contents response body for
// wantPath. It takes ownership of body and may overwrite it. The checks run
// in an order that never decodes what it has not bounded:
//
//  1. well-formed JSON object with a type (else ErrUnavailable);
//  2. type "file" (dir, symlink, submodule, anything else: ErrNotFile);
//  3. path equal to wantPath (else ErrInconsistent: a followed symlink
//     reporting its target);
//  4. size present, ≤ MaxFileSize, and encoding not "none" (ErrTooLarge),
//     before any decoding;
//  5. null or absent content only with size 0; otherwise encoding "base64"
//     (else ErrUnavailable), base64 that decodes to exactly size bytes
//     (else ErrInconsistent; the encoded length is checked first, so a lying
//     size never causes a large allocation);
//  6. git blob SHA-1 of the bytes equal to sha (else ErrInconsistent);
//  7. valid UTF-8 with no NUL (else ErrNotUTF8).
func decodeContents(body []byte, wantPath string) (*File, error) {
	var obj contentsObject
	if err := json.Unmarshal(body, &obj); err != nil {
		return nil, fmt.Errorf("%w: malformed contents JSON", ErrUnavailable)
	}
	switch obj.Type {
	case "file":
	case "":
		return nil, fmt.Errorf("%w: contents response without a type", ErrUnavailable)
	case "dir", "symlink", "submodule":
		return nil, fmt.Errorf("%w: object is a %s", ErrNotFile, obj.Type)
	default:
		return nil, fmt.Errorf("%w: object of unknown type", ErrNotFile)
	}
	if obj.Path == nil || *obj.Path != wantPath {
		return nil, fmt.Errorf("%w: response path differs from the request", ErrInconsistent)
	}
	if obj.Size == nil || *obj.Size < 0 {
		return nil, fmt.Errorf("%w: missing or negative size", ErrInconsistent)
	}
	size := *obj.Size
	if size > MaxFileSize {
		return nil, fmt.Errorf("%w: %d bytes, over %d", ErrTooLarge, size, MaxFileSize)
	}
	if obj.Encoding != nil && *obj.Encoding == "none" {
		// GitHub does not inline content for files over its own limit.
		return nil, fmt.Errorf("%w: content not inlined (encoding none)", ErrTooLarge)
	}
	content, err := decodeBase64Content(obj.Content.raw, obj.Encoding, int(size))
	if err != nil {
		return nil, err
	}
	if !isSHA1Hex(obj.SHA) || blobSHA(content) != obj.SHA {
		return nil, fmt.Errorf("%w: blob SHA-1 does not match the content", ErrInconsistent)
	}
	if !utf8.Valid(content) {
		return nil, fmt.Errorf("%w: invalid UTF-8", ErrNotUTF8)
	}
	if bytes.IndexByte(content, 0) >= 0 {
		return nil, fmt.Errorf("%w: NUL byte", ErrNotUTF8)
	}
	return &File{Path: *obj.Path, BlobSHA: obj.SHA, Size: len(content), Content: content}, nil
}

// decodeBase64Content turns the raw JSON value of "content" into exactly
// size bytes. raw may be overwritten.
func decodeBase64Content(raw []byte, encoding *string, size int) ([]byte, error) {
	if raw == nil || string(raw) == "null" {
		if size != 0 {
			return nil, fmt.Errorf("%w: no content for a non-empty file", ErrInconsistent)
		}
		return []byte{}, nil
	}
	if encoding == nil || *encoding != "base64" {
		return nil, fmt.Errorf("%w: unsupported content encoding", ErrUnavailable)
	}
	if len(raw) < 2 || raw[0] != '"' {
		return nil, fmt.Errorf("%w: content is not a string", ErrUnavailable)
	}
	b64, ok := compactBase64(raw[1 : len(raw)-1])
	if !ok {
		// An escape GitHub does not use (\u...): unquote properly, slowly.
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("%w: content is not a string", ErrUnavailable)
		}
		b64 = []byte(s)
		n := 0
		for _, c := range b64 {
			if c != '\n' && c != '\r' {
				b64[n] = c
				n++
			}
		}
		b64 = b64[:n]
	}
	// Padded base64 of size bytes is exactly this long. Checking it first
	// means a lying size can neither cause a large allocation nor hide
	// extra bytes.
	if len(b64) != base64.StdEncoding.EncodedLen(size) {
		return nil, fmt.Errorf("%w: content length does not match size", ErrInconsistent)
	}
	out := make([]byte, base64.StdEncoding.DecodedLen(len(b64)))
	n, err := base64.StdEncoding.Strict().Decode(out, b64)
	if err != nil {
		return nil, fmt.Errorf("%w: content is not valid base64", ErrInconsistent)
	}
	if n != size {
		return nil, fmt.Errorf("%w: decoded length does not match size", ErrInconsistent)
	}
	return out[:n:n], nil
}

// compactBase64 removes the JSON escapes \n and \r (GitHub's line breaks)
// from the inside of a JSON string, in place, and unescapes \/. It reports
// false, without touching s, on any other escape, for the caller to unquote
// the slow way.
func compactBase64(s []byte) ([]byte, bool) {
	for i := 0; i < len(s); i++ {
		j := bytes.IndexByte(s[i:], '\\')
		if j < 0 {
			break
		}
		i += j + 1
		if i >= len(s) {
			return nil, false
		}
		if c := s[i]; c != 'n' && c != 'r' && c != '/' {
			return nil, false
		}
	}
	n := 0
	for i := 0; i < len(s); {
		j := bytes.IndexByte(s[i:], '\\')
		if j < 0 {
			n += copy(s[n:], s[i:])
			break
		}
		n += copy(s[n:], s[i:i+j])
		i += j + 1 // the escaped character, present per the check above
		if s[i] == '/' {
			s[n] = '/'
			n++
		}
		i++
	}
	return s[:n], true
}

// blobSHA is git's object ID for a blob: SHA-1 over "blob <len>\x00<data>".
func blobSHA(data []byte) string {
	h := sha1.New()
	h.Write([]byte("blob " + strconv.Itoa(len(data)) + "\x00"))
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}
