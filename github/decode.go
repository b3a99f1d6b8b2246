package github

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
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
// A body that is not well-formed JSON is ErrUnavailable whichever check
// would have failed first, as if the whole body had been validated first.
func decodeContents(body []byte, wantPath string) (*File, error) {
	f, _, err := decodeContentsSum(body, wantPath, false)
	return f, err
}

// decodeContentsSum is decodeContents that also returns the SHA-256 of the
// content when withSHA256 is set (computed beside the decoding).
func decodeContentsSum(body []byte, wantPath string, withSHA256 bool) (*File, [sha256.Size]byte, error) {
	var none [sha256.Size]byte
	obj, ok := parseContentsObject(body)
	malformed := fmt.Errorf("%w: malformed contents JSON", ErrUnavailable)
	if !ok {
		return nil, none, malformed
	}
	// refuse reports err, unless the content string (not yet checked
	// character by character) makes the whole body malformed.
	refuse := func(err error) (*File, [sha256.Size]byte, error) {
		if obj.contentKind == '"' && !validStringBody(obj.content) {
			return nil, none, malformed
		}
		return nil, none, err
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
	var d decoded
	switch obj.contentKind {
	case 0, 'n':
		if size != 0 {
			return nil, none, fmt.Errorf("%w: no content for a non-empty file", ErrInconsistent)
		}
		g := newDigests(nil, 0, withSHA256)
		g.finish(0)
		d.take(g)
		d.content = []byte{}
	case 'x':
		return nil, none, fmt.Errorf("%w: content is not a string", ErrUnavailable)
	default:
		if obj.encoding == nil || *obj.encoding != "base64" {
			return refuse(fmt.Errorf("%w: unsupported content encoding", ErrUnavailable))
		}
		var err error
		if d, err = decodeContent(obj.content, int(size), withSHA256); err != nil {
			return nil, none, err
		}
	}
	if !isSHA1Hex(obj.sha) || hex.EncodeToString(d.blobSHA[:]) != obj.sha {
		return nil, none, fmt.Errorf("%w: blob SHA-1 does not match the content", ErrInconsistent)
	}
	if d.invalid {
		return nil, none, fmt.Errorf("%w: invalid UTF-8", ErrNotUTF8)
	}
	if d.nul {
		return nil, none, fmt.Errorf("%w: NUL byte", ErrNotUTF8)
	}
	return &File{Path: *obj.path, BlobSHA: obj.sha, Size: len(d.content), Content: d.content}, d.sha256, nil
}

// decoded is file content with what was learnt while decoding it.
type decoded struct {
	content []byte
	blobSHA [sha1.Size]byte
	sha256  [sha256.Size]byte // zero unless asked for
	nul     bool              // content holds a NUL byte
	invalid bool              // content is not valid UTF-8
}

func (d *decoded) take(g *digests) {
	g.blob.Sum(d.blobSHA[:0])
	if g.sum != nil {
		g.sum.Sum(d.sha256[:0])
	}
	d.nul, d.invalid = g.nul, g.invalid
}

// chunk is how much base64 is decoded at a time: a multiple of 4, small
// enough that the decoded piece is still in cache when it is hashed.
const chunk = 64 << 10

// decodeContent decodes raw, the escaped body of the JSON "content" string,
// into exactly size bytes, in place, checking and hashing them (digests) as
// they are produced. The returned content shares raw's memory.
//
//   - GitHub wraps base64 in 60-character lines, so raw is mostly runs of
//     base64 separated by the escape \n. The escapes \n and \r (line breaks)
//     are dropped and \/ becomes '/', while the runs are moved together with
//     one memmove each. Any other escape is decoded too, and a decoded line
//     break dropped, exactly as unquoting the string and then removing line
//     breaks would.
//   - The compacted base64 must be exactly as long as padded base64 of size
//     bytes, so a lying size neither hides extra bytes nor causes work.
//   - It is decoded 64 KiB at a time to the front of raw. Chunk k decodes to
//     [48Ki·k, 48Ki·(k+1)), which lies before its own source [64Ki·k, …)
//     from k = 3 on, so from then on it is decoded straight there; the first
//     three chunks, whose output would overwrite their own input, go through
//     a scratch buffer. Input and output of the decoder never alias.
//
// Characters are checked without a separate pass: base64.StdEncoding.Strict
// refuses every byte outside its alphabet except raw CR and LF, which it
// skips, and skipping any would leave fewer than size bytes. A failure is
// then classified: a raw control character, or invalid UTF-8, means the
// JSON itself was malformed (ErrUnavailable); anything else is content that
// is not base64 of size bytes (ErrInconsistent). When an escape other than
// \n, \r or \/ shows up, the rest of the string is validated on the spot,
// before it is rewritten, because such escapes can produce control
// characters that would be indistinguishable from raw ones afterwards.
func decodeContent(raw []byte, size int, withSHA256 bool) (decoded, error) {
	var d decoded
	malformed := fmt.Errorf("%w: malformed contents JSON", ErrUnavailable)
	notBase64 := func(b64 []byte, checked bool) error {
		if !checked && hasRawJSONError(b64) {
			return malformed
		}
		return fmt.Errorf("%w: content is not valid base64", ErrInconsistent)
	}

	// Compact in place.
	w, checked := 0, false
	for i := 0; i < len(raw); {
		j := bytes.IndexByte(raw[i:], '\\')
		if j < 0 {
			w += copy(raw[w:], raw[i:])
			break
		}
		w += copy(raw[w:], raw[i:i+j])
		i += j
		switch {
		case i+1 < len(raw) && (raw[i+1] == 'n' || raw[i+1] == 'r'):
			i += 2
		case i+1 < len(raw) && raw[i+1] == '/':
			raw[w] = '/'
			w++
			i += 2
		default:
			if !checked {
				// Everything before i is raw characters or '/'; everything
				// from i on is still as received.
				if hasRawJSONError(raw[:w]) || !validStringBody(raw[i:]) {
					return d, malformed
				}
				checked = true
			}
			dw, dr := unescapeAt(raw[w:], raw, i)
			if dw == 1 && (raw[w] == '\n' || raw[w] == '\r') {
				dw = 0
			}
			w += dw
			i += dr
		}
	}
	b64 := raw[:w]
	if len(b64) != base64.StdEncoding.EncodedLen(size) {
		if !checked && hasRawJSONError(b64) {
			return d, malformed
		}
		return d, fmt.Errorf("%w: content length does not match size", ErrInconsistent)
	}

	// Decode chunk by chunk, handing each finished piece to the digests.
	enc := base64.StdEncoding.Strict()
	var scratch []byte
	g := newDigests(b64, size, withSHA256)
	defer g.finish(0) // on error paths: stop the goroutines
	out := 0
	for in := 0; in < len(b64); in += chunk {
		src := b64[in:min(in+chunk, len(b64))]
		last := in+chunk >= len(b64)
		var n int
		var err error
		if out+enc.DecodedLen(len(src)) <= in {
			n, err = enc.Decode(b64[out:in], src)
		} else {
			if scratch == nil {
				scratch = make([]byte, enc.DecodedLen(chunk))
			}
			n, err = enc.Decode(scratch, src)
			if err == nil {
				copy(b64[out:], scratch[:n])
			}
		}
		if err != nil || (!last && n != enc.DecodedLen(chunk)) {
			return d, notBase64(src, checked)
		}
		g.add(out, out+n)
		out += n
	}
	if out != size {
		return d, fmt.Errorf("%w: decoded length does not match size", ErrInconsistent)
	}
	g.finish(size)
	d.take(g)
	d.content = b64[:size:size]
	return d, nil
}

// hasRawJSONError reports whether b, characters taken from a JSON string
// as they were received, holds a control character or invalid UTF-8, which
// no well-formed JSON string does.
func hasRawJSONError(b []byte) bool {
	for _, c := range b {
		if c < 0x20 {
			return true
		}
	}
	return !utf8.Valid(b)
}

// blobSHA is git's object ID for a blob: SHA-1 over "blob <len>\x00<data>".
func blobSHA(data []byte) string {
	h := sha1.New()
	h.Write([]byte("blob " + strconv.Itoa(len(data)) + "\x00"))
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}
