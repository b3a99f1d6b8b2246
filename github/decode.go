package github

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// contentsObject is the part of a contents response (media type
// application/vnd.github.object+json) that is checked. Other members are
// checked for syntax and skipped, because GitHub adds fields without a
// version change.
type contentsObject struct {
	typ      string  // "" when absent or null
	encoding *string // nil when absent or null
	size     *int64
	path     *string
	sha      string
	// content is the raw body of the "content" string, between its quotes
	// and still escaped (contentKind '"'); contentKind is 0 when the member
	// is absent, 'n' for null and 'x' for any other kind of value.
	content     []byte
	contentKind byte
}

// errMalformed is every syntax error of a contents body.
var errMalformed = fmt.Errorf("%w: malformed contents JSON", ErrUnavailable)

// Members the decoder reads; each may appear once.
const (
	seenType = 1 << iota
	seenEncoding
	seenSize
	seenPath
	seenSHA
	seenContent
)

// parseContentsObject reads the top-level object of body. It checks the
// syntax of everything except the characters of the content string, which
// decodeContent checks while it decodes them (or validStringBody, when the
// answer is refused before decoding).
func parseContentsObject(body []byte) (contentsObject, bool) {
	var obj contentsObject
	s := scanner{b: body}
	if !s.eat('{') {
		return obj, false
	}
	if s.eat('}') {
		return obj, s.next() == 0 && s.i == len(body)
	}
	seen := 0
	for {
		if s.next() != '"' {
			return obj, false
		}
		raw, esc, ok := s.str()
		if !ok || !s.eat(':') {
			return obj, false
		}
		name := unquote(raw, esc)
		bit := 0
		switch name {
		case "type":
			bit = seenType
			var v *string
			if v, ok = s.stringOrNull(); ok && v != nil {
				obj.typ = *v
			}
		case "encoding":
			bit = seenEncoding
			obj.encoding, ok = s.stringOrNull()
		case "size":
			bit = seenSize
			obj.size, ok = s.intOrNull()
		case "path":
			bit = seenPath
			obj.path, ok = s.stringOrNull()
		case "sha":
			bit = seenSHA
			var v *string
			if v, ok = s.stringOrNull(); ok && v != nil {
				obj.sha = *v
			}
		case "content":
			bit = seenContent
			switch s.next() {
			case '"':
				obj.content, ok = s.rawStringEnd()
				obj.contentKind = '"'
			case 'n':
				ok = s.literal("null")
				obj.contentKind = 'n'
			default:
				ok = s.skipValue()
				obj.contentKind = 'x'
			}
		default:
			ok = s.skipValue()
		}
		if !ok || seen&bit != 0 {
			return obj, false
		}
		seen |= bit
		if s.eat(',') {
			continue
		}
		if !s.eat('}') {
			return obj, false
		}
		s.skipSpace()
		return obj, s.i == len(body)
	}
}

// decodeContents parses and verifies one contents response body for
// wantPath. It takes ownership of body: the content is decoded in place, and
// the returned File.Content shares body's memory, so a read holds one buffer
// rather than the response and the file side by side. The checks run in an
// order that never decodes what it has not bounded:
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
//
// The SHA-256 of the content is computed last, in the caller's goroutine.
// A body that is not well-formed JSON is ErrUnavailable whichever check
// would have failed first, as if the whole body had been validated first.
func decodeContents(body []byte, wantPath string) (*File, error) {
	obj, ok := parseContentsObject(body)
	if !ok {
		return nil, errMalformed
	}
	// refuse reports err, unless the content string (not yet checked
	// character by character) makes the whole body malformed.
	refuse := func(err error) (*File, error) {
		if obj.contentKind == '"' && !validStringBody(obj.content) {
			return nil, errMalformed
		}
		return nil, err
	}
	switch obj.typ {
	case "file":
	case "":
		return refuse(fmt.Errorf("%w: contents response without a type", ErrUnavailable))
	case "dir", "symlink", "submodule":
		return refuse(fmt.Errorf("%w: object is a %s", ErrNotFile, obj.typ))
	default:
		return refuse(fmt.Errorf("%w: object of unknown type", ErrNotFile))
	}
	if obj.path == nil || *obj.path != wantPath {
		return refuse(fmt.Errorf("%w: response path differs from the request", ErrInconsistent))
	}
	if obj.size == nil || *obj.size < 0 {
		return refuse(fmt.Errorf("%w: missing or negative size", ErrInconsistent))
	}
	size := *obj.size
	if size > MaxFileSize {
		return refuse(fmt.Errorf("%w: %d bytes, over %d", ErrTooLarge, size, MaxFileSize))
	}
	if obj.encoding != nil && *obj.encoding == "none" {
		// GitHub does not inline content for files over its own limit.
		return refuse(fmt.Errorf("%w: content not inlined (encoding none)", ErrTooLarge))
	}
	content := []byte{}
	switch obj.contentKind {
	case 0, 'n':
		if size != 0 {
			return nil, fmt.Errorf("%w: no content for a non-empty file", ErrInconsistent)
		}
	case 'x':
		return nil, fmt.Errorf("%w: content is not a string", ErrUnavailable)
	default:
		if obj.encoding == nil || *obj.encoding != "base64" {
			return refuse(fmt.Errorf("%w: unsupported content encoding", ErrUnavailable))
		}
		var err error
		if content, err = decodeContent(obj.content, int(size)); err != nil {
			return nil, err
		}
	}
	if !isSHA1Hex(obj.sha) || blobSHA(content) != obj.sha {
		return nil, fmt.Errorf("%w: blob SHA-1 does not match the content", ErrInconsistent)
	}
	if !utf8.Valid(content) {
		return nil, fmt.Errorf("%w: invalid UTF-8", ErrNotUTF8)
	}
	if bytes.IndexByte(content, 0) >= 0 {
		return nil, fmt.Errorf("%w: NUL byte", ErrNotUTF8)
	}
	return &File{Path: *obj.path, BlobSHA: obj.sha, Size: len(content), Content: content,
		SHA256: sha256.Sum256(content)}, nil
}

// blobSHA is git's object ID for a blob: SHA-1 over "blob <len>\x00<data>".
func blobSHA(data []byte) string {
	h := sha1.New()
	h.Write([]byte("blob " + strconv.Itoa(len(data)) + "\x00"))
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}
