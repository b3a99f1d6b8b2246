package github

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
)

// chunk is how much base64 is decoded at a time: a multiple of 4.
const chunk = 64 << 10

// decodeContent decodes raw, the "content" member as received (a JSON
// string, quotes included, that encoding/json has already checked), into
// exactly size bytes, in place: the result shares raw's memory.
//
//   - GitHub wraps base64 in 60-character lines, so the string is runs of
//     base64 separated by the escape \n. The escapes \n and \r are dropped
//     and \/ becomes '/' while the runs are moved together (JSON strings
//     hold no raw line break).
//   - From any other escape on (GitHub sends none), the rest of the string
//     is unquoted by encoding/json and its line breaks dropped, exactly as
//     unquoting the whole string and then removing line breaks would.
//   - The compacted base64 must be exactly as long as padded base64 of size
//     bytes, so a lying size neither hides extra bytes nor causes work.
//   - It is decoded 64 KiB at a time to the front of raw. Chunk k decodes to
//     [48Ki·k, 48Ki·(k+1)), before its own source [64Ki·k, …) from k = 3 on;
//     the first three chunks, whose output would overwrite their own input,
//     go through a scratch buffer. Input and output never alias.
//
// base64.StdEncoding.Strict refuses every byte outside its alphabet except
// CR and LF, which the compaction has already removed.
func decodeContent(raw []byte, size int) ([]byte, error) {
	s := raw[1 : len(raw)-1] // the string's characters, between the quotes
	w := 0
	for i := 0; i < len(s); {
		j := bytes.IndexByte(s[i:], '\\')
		if j < 0 {
			w += copy(s[w:], s[i:])
			break
		}
		w += copy(s[w:], s[i:i+j])
		i += j
		if c := s[i+1]; c == 'n' || c == 'r' {
			i += 2
			continue
		} else if c == '/' {
			s[w] = '/'
			w++
			i += 2
			continue
		}
		// raw[i+1:] is the rest of the string from this escape on, with the
		// closing quote: unquote it as a string of its own.
		var rest string
		if err := json.Unmarshal(append([]byte{'"'}, raw[i+1:]...), &rest); err != nil {
			return nil, errMalformed // cannot happen: encoding/json checked raw
		}
		w += copy(s[w:], strings.ReplaceAll(strings.ReplaceAll(rest, "\n", ""), "\r", ""))
		break
	}
	b64 := s[:w]
	if len(b64) != base64.StdEncoding.EncodedLen(size) {
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
			return nil, fmt.Errorf("%w: content is not valid base64", ErrInconsistent)
		}
		out += n
	}
	if out != size {
		return nil, fmt.Errorf("%w: decoded length does not match size", ErrInconsistent)
	}
	return b64[:size:size], nil
}
