package github

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"unicode/utf8"
)

// contentsObject is the part of a contents response (media type
// application/vnd.github.object+json) that is checked. Other members are
// checked for syntax by encoding/json and skipped, because GitHub adds
// fields without a version change.
type contentsObject struct {
	typ, encoding, path, sha string // "" when absent or null
	size                     *int64 // nil when absent or null
	// content is the raw JSON value of the "content" member, a slice of the
	// body (nil when the member is absent); encoding/json has checked it.
	content []byte
}

// errMalformed is every syntax error of a contents body.
var errMalformed = fmt.Errorf("%w: malformed contents JSON", ErrUnavailable)

// rawValue keeps a member's raw JSON as json.Unmarshal hands it over, not
// copied: a slice of the body, as inBody verifies.
type rawValue []byte

func (r *rawValue) UnmarshalJSON(b []byte) error {
	*r = b
	return nil
}

// skipValue lets a json.Decoder check a value without keeping it.
type skipValue struct{}

func (*skipValue) UnmarshalJSON([]byte) error { return nil }

// inBody reports whether v is a slice of body's own memory, and where.
func inBody(body, v []byte) (int, bool) {
	off := cap(body) - cap(v)
	return off, len(v) > 0 && off >= 0 && off+len(v) <= len(body) && &body[off] == &v[0]
}

// parseContentsObject reads the top-level object of body with encoding/json,
// in one pass over the whole body and one over its member names:
//
//   - json.Unmarshal into a map checks the whole body and gives every
//     member by its exact name (a struct would also take "Path" or "PATH"
//     for path). Each value stays where it is in body, so the content is
//     neither copied nor unquoted before it is decoded in place. encoding/json
//     does not promise to hand over slices of its input, so inBody proves it
//     for each value, or the body is refused.
//   - A map keeps the last of repeated members, so a json.Decoder walks the
//     member names of a skeleton of the body (every value replaced by 0, so
//     the Decoder buffers little), and a member read here may not appear
//     twice. Other members may: they decide nothing.
//   - The JSON text must be valid UTF-8, as RFC 8259 requires
//     (encoding/json would replace invalid bytes with U+FFFD).
func parseContentsObject(body []byte) (contentsObject, bool) {
	var obj contentsObject
	var members map[string]rawValue
	if !utf8.Valid(body) || json.Unmarshal(body, &members) != nil || members == nil {
		return obj, false // members is nil for a body of null
	}
	type span struct{ off, end int }
	spans := make([]span, 0, len(members))
	for _, v := range members {
		off, ok := inBody(body, v)
		if !ok {
			return obj, false
		}
		spans = append(spans, span{off, off + len(v)})
	}
	slices.SortFunc(spans, func(a, b span) int { return a.off - b.off })
	var skeleton []byte
	prev := 0
	for _, sp := range spans {
		skeleton = append(append(skeleton, body[prev:sp.off]...), '0')
		prev = sp.end
	}
	skeleton = append(skeleton, body[prev:]...)
	dec := json.NewDecoder(bytes.NewReader(skeleton))
	if _, err := dec.Token(); err != nil { // the object's {
		return obj, false // here and below cannot happen: the body is valid
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil || dec.Decode(&skipValue{}) != nil {
			return obj, false
		}
		switch name := tok.(string); name {
		case "type", "encoding", "size", "path", "sha", "content":
			if seen[name] {
				return obj, false
			}
			seen[name] = true
		}
	}
	for name, dst := range map[string]any{"type": &obj.typ, "encoding": &obj.encoding,
		"size": &obj.size, "path": &obj.path, "sha": &obj.sha} {
		if v, ok := members[name]; ok && json.Unmarshal(v, dst) != nil {
			return obj, false // a member of the wrong type
		}
	}
	obj.content = members["content"]
	return obj, true
}

// decodeContents parses and verifies one contents response body for
// wantPath. It takes ownership of body: the content is decoded in place and
// File.Content shares body's memory, so a read holds one buffer, not two. A
// body that is not well-formed JSON is ErrUnavailable whatever else is wrong
// with it; then the checks run in an order that never decodes what it has not
// bounded:
//
//  1. a type (else ErrUnavailable);
//  2. type "file" (dir, symlink, submodule, anything else: ErrNotFile);
//  3. path equal to wantPath (else ErrInconsistent: a followed symlink
//     reporting its target);
//  4. size present, ≤ MaxFileSize, and encoding not "none" (ErrTooLarge),
//     before any decoding;
//  5. null or absent content only with size 0; otherwise a string with
//     encoding "base64" (else ErrUnavailable), base64 that decodes to
//     exactly size bytes (else ErrInconsistent; the encoded length is
//     checked first, so a lying size never causes work);
//  6. git blob SHA-1 of the bytes equal to sha (else ErrInconsistent);
//  7. valid UTF-8 with no NUL (else ErrNotUTF8).
//
// The SHA-256 of the content is computed last, in the caller's goroutine.
func decodeContents(body []byte, wantPath string) (*File, error) {
	obj, ok := parseContentsObject(body)
	if !ok {
		return nil, errMalformed
	}
	switch typ := obj.typ; typ {
	case "file":
	case "":
		return nil, fmt.Errorf("%w: contents response without a type", ErrUnavailable)
	case "dir", "symlink", "submodule":
		return nil, fmt.Errorf("%w: object is a %s", ErrNotFile, typ)
	default:
		return nil, fmt.Errorf("%w: object of unknown type", ErrNotFile)
	}
	if obj.path != wantPath || wantPath == "" {
		return nil, fmt.Errorf("%w: response path differs from the request", ErrInconsistent)
	}
	if obj.size == nil || *obj.size < 0 {
		return nil, fmt.Errorf("%w: missing or negative size", ErrInconsistent)
	}
	size := *obj.size
	if size > MaxFileSize {
		return nil, fmt.Errorf("%w: %d bytes, over %d", ErrTooLarge, size, MaxFileSize)
	}
	if obj.encoding == "none" {
		// GitHub does not inline content for files over its own limit.
		return nil, fmt.Errorf("%w: content not inlined (encoding none)", ErrTooLarge)
	}
	content := []byte{}
	switch {
	case obj.content == nil || obj.content[0] == 'n':
		if size != 0 {
			return nil, fmt.Errorf("%w: no content for a non-empty file", ErrInconsistent)
		}
	case obj.content[0] != '"':
		return nil, fmt.Errorf("%w: content is not a string", ErrUnavailable)
	case obj.encoding != "base64":
		return nil, fmt.Errorf("%w: unsupported content encoding", ErrUnavailable)
	default:
		var err error
		if content, err = decodeContent(obj.content, int(size)); err != nil {
			return nil, err
		}
	}
	sha := obj.sha
	if !isSHA1Hex(sha) || blobSHA(content) != sha {
		return nil, fmt.Errorf("%w: blob SHA-1 does not match the content", ErrInconsistent)
	}
	if !utf8.Valid(content) {
		return nil, fmt.Errorf("%w: invalid UTF-8", ErrNotUTF8)
	}
	if bytes.IndexByte(content, 0) >= 0 {
		return nil, fmt.Errorf("%w: NUL byte", ErrNotUTF8)
	}
	return &File{Path: obj.path, BlobSHA: sha, Size: len(content), Content: content,
		SHA256: sha256.Sum256(content)}, nil
}

// blobSHA is git's object ID for a blob: SHA-1 over "blob <len>\x00<data>".
func blobSHA(data []byte) string {
	h := sha1.New()
	h.Write([]byte("blob " + strconv.Itoa(len(data)) + "\x00"))
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}
