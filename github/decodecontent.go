package github

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"unicode/utf8"
)

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
	notBase64 := func(b64 []byte, checked bool) error {
		if !checked && hasRawJSONError(b64) {
			return errMalformed
		}
		return fmt.Errorf("%w: content is not valid base64", ErrInconsistent)
	}

	// Compact in place.
	w, checked := 0, false
	for i := 0; i < len(raw); {
		if n := moveLines(raw, i, w); n > 0 {
			i, w = i+n*lineLen, w+n*(lineLen-2)
			continue
		}
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
					return d, errMalformed
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
			return d, errMalformed
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

// lineLen is one line of GitHub's base64 as it appears in the JSON string:
// 60 characters and the escape \n.
const lineLen = 62

// moveLines moves whole lines of GitHub's layout from raw[i:] to raw[w:]
// (w ≤ i), without their \n, and returns how many it moved. It stops at the
// first stretch that is not exactly 60 characters without a backslash
// followed by \n, which the general loop then handles. It does in a few
// word operations per line what bytes.IndexByte and copy cost two calls
// for: on a 1 MiB file that is 17,500 lines.
//
// Words are loaded and stored in increasing order, so moving left is safe
// even when the ranges overlap: each store ends before the next load starts.
func moveLines(raw []byte, i, w int) int {
	n := 0
	for ; i+lineLen <= len(raw) && raw[i+60] == '\\' && raw[i+61] == 'n'; i, w, n = i+lineLen, w+lineLen-2, n+1 {
		line := raw[i : i+60 : i+60]
		if !plainLine(line, false) {
			return n
		}
		dst := raw[w : w+60 : w+60]
		for k := 0; k < 56; k += 8 {
			binary.LittleEndian.PutUint64(dst[k:], binary.LittleEndian.Uint64(line[k:]))
		}
		binary.LittleEndian.PutUint32(dst[56:], binary.LittleEndian.Uint32(line[56:]))
	}
	return n
}

// plainLine reports whether the 60 bytes of line hold no backslash and, if
// quote is set, no '"', a word at a time: XOR with the byte sought turns it
// into a zero byte, and (x - 0x01…) &^ x & 0x80… is non-zero exactly when x
// has a zero byte.
func plainLine(line []byte, quote bool) bool {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	var found uint64
	for k := 0; k < 56; k += 8 {
		w := binary.LittleEndian.Uint64(line[k:])
		x := w ^ 0x5c5c5c5c5c5c5c5c
		found |= (x - lo) &^ x & hi
		if quote {
			y := w ^ 0x2222222222222222
			found |= (y - lo) &^ y & hi
		}
	}
	t := binary.LittleEndian.Uint32(line[56:60])
	x := t ^ 0x5c5c5c5c
	tail := (x - 0x01010101) &^ x & 0x80808080
	if quote {
		y := t ^ 0x22222222
		tail |= (y - 0x01010101) &^ y & 0x80808080
	}
	return found == 0 && tail == 0
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
