package github

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"unicode/utf8"
)

// chunk is how much base64 is decoded at a time: a multiple of 4.
const chunk = 64 << 10

// decodeContent decodes raw, the escaped body of the JSON "content" string,
// into exactly size bytes, in place. The returned content shares raw's
// memory, so a read holds one buffer, not the answer and the file side by
// side.
//
//   - GitHub wraps base64 in 60-character lines, so raw is mostly runs of
//     base64 separated by the escape \n. The escapes \n and \r (line breaks)
//     are dropped and \/ becomes '/', while the runs are moved together.
//     Any other escape is decoded too, and a decoded line break dropped,
//     exactly as unquoting the string and then removing line breaks would.
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
func decodeContent(raw []byte, size int) ([]byte, error) {
	notBase64 := func(b64 []byte, checked bool) error {
		if !checked && hasRawJSONError(b64) {
			return errMalformed
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
					return nil, errMalformed
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
			return nil, errMalformed
		}
		return nil, fmt.Errorf("%w: content length does not match size", ErrInconsistent)
	}

	// Decode chunk by chunk to the front of the buffer.
	enc := base64.StdEncoding.Strict()
	var scratch []byte
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
				// As large as the first chunk's output, which no later chunk
				// exceeds: a small file needs no more.
				scratch = make([]byte, enc.DecodedLen(len(src)))
			}
			n, err = enc.Decode(scratch, src)
			if err == nil {
				copy(b64[out:], scratch[:n])
			}
		}
		if err != nil || (!last && n != enc.DecodedLen(chunk)) {
			return nil, notBase64(src, checked)
		}
		out += n
	}
	if out != size {
		return nil, fmt.Errorf("%w: decoded length does not match size", ErrInconsistent)
	}
	return b64[:size:size], nil
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
