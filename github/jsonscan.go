package github

import (
	"bytes"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// A strict reader for the one JSON shape the contents decoder needs: a
// top-level object whose few interesting members are picked out and whose
// other members are checked and skipped. It exists for speed: encoding/json
// validates the whole 1.4 MB body (checkValid) before decoding it and then
// scans and unescapes the base64 string a second time, which made JSON
// parsing about two thirds of a 1 MiB read. Here the big string is only
// delimited (bytes.IndexByte), and its escapes are handled once, while it is
// compacted for base64 (see decodeContent).
//
// It is stricter than encoding/json, never looser: RFC 8259 grammar, no
// trailing data, at most maxDepth nested containers, strings that are valid
// UTF-8 (encoding/json silently replaces invalid bytes with U+FFFD). Member
// names match exactly (encoding/json also matches "Path" or "PATH"), and a
// member the decoder reads may appear only once (encoding/json keeps the
// last one). Lone UTF-16 surrogates in \u escapes become U+FFFD, as in
// encoding/json.

// maxDepth bounds nesting, the top-level object included, as in encoding/json.
const maxDepth = 10000

type scanner struct {
	b []byte
	i int
}

func (s *scanner) skipSpace() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// next skips white space and returns the next byte without consuming it,
// or 0 at the end of the input.
func (s *scanner) next() byte {
	s.skipSpace()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// eat consumes c after optional white space.
func (s *scanner) eat(c byte) bool {
	if s.next() == c {
		s.i++
		return true
	}
	return false
}

// literal consumes true, false or null.
func (s *scanner) literal(lit string) bool {
	if len(s.b)-s.i >= len(lit) && string(s.b[s.i:s.i+len(lit)]) == lit {
		s.i += len(lit)
		return true
	}
	return false
}

// number consumes a JSON number and reports whether it is an integer (no
// fraction, no exponent).
func (s *scanner) number() (lit []byte, isInt, ok bool) {
	start := s.i
	digits := func() int {
		n := 0
		for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
			s.i++
			n++
		}
		return n
	}
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	switch {
	case s.i < len(s.b) && s.b[s.i] == '0':
		s.i++
	case digits() == 0:
		return nil, false, false
	}
	isInt = true
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if digits() == 0 {
			return nil, false, false
		}
		isInt = false
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if digits() == 0 {
			return nil, false, false
		}
		isInt = false
	}
	return s.b[start:s.i], isInt, true
}

// str consumes a string (s.b[s.i] must be '"'), checking every character,
// and returns its raw body between the quotes and whether it has escapes.
// It walks byte by byte, so it is for short strings; see rawStringEnd for
// the content.
func (s *scanner) str() (raw []byte, escaped, ok bool) {
	s.i++ // the opening quote
	start := s.i
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			raw = s.b[start:s.i]
			s.i++
			return raw, escaped, true
		case c == '\\':
			n := escapeLen(s.b[s.i:])
			if n == 0 {
				return nil, false, false
			}
			escaped = true
			s.i += n
		case c < 0x20:
			return nil, false, false
		case c < utf8.RuneSelf:
			s.i++
		default:
			r, n := utf8.DecodeRune(s.b[s.i:])
			if r == utf8.RuneError && n == 1 {
				return nil, false, false
			}
			s.i += n
		}
	}
	return nil, false, false
}

// escapeLen returns the length of the valid escape at the start of b (which
// begins with a backslash), or 0.
func escapeLen(b []byte) int {
	if len(b) < 2 {
		return 0
	}
	switch b[1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2
	case 'u':
		if len(b) < 6 {
			return 0
		}
		if _, ok := hex4(b[2:6]); !ok {
			return 0
		}
		return 6
	}
	return 0
}

func hex4(b []byte) (rune, bool) {
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// unescapeAt decodes the escape at raw[i] (a backslash; the escape is known
// to be valid) into dst, which may be raw itself as long as dst's write
// position is at most i: an escape never decodes to more bytes than it
// spans. It returns the number of bytes written and read.
func unescapeAt(dst, raw []byte, i int) (w, r int) {
	switch c := raw[i+1]; c {
	case '"', '\\', '/':
		dst[0] = c
		return 1, 2
	case 'b':
		dst[0] = '\b'
		return 1, 2
	case 'f':
		dst[0] = '\f'
		return 1, 2
	case 'n':
		dst[0] = '\n'
		return 1, 2
	case 'r':
		dst[0] = '\r'
		return 1, 2
	case 't':
		dst[0] = '\t'
		return 1, 2
	}
	// \uXXXX, possibly the first half of a surrogate pair.
	r1, _ := hex4(raw[i+2:])
	if utf16.IsSurrogate(r1) {
		if len(raw)-i >= 12 && raw[i+6] == '\\' && raw[i+7] == 'u' {
			if r2, ok := hex4(raw[i+8:]); ok {
				if dec := utf16.DecodeRune(r1, r2); dec != utf8.RuneError {
					return utf8.EncodeRune(dst, dec), 12
				}
			}
		}
		r1 = utf8.RuneError // a lone surrogate, as encoding/json does
	}
	return utf8.EncodeRune(dst, r1), 6
}

// unquote returns the value of a string body that str accepted.
func unquote(raw []byte, escaped bool) string {
	if !escaped {
		return string(raw)
	}
	out := make([]byte, len(raw))
	w := 0
	for i := 0; i < len(raw); {
		if raw[i] != '\\' {
			out[w] = raw[i]
			w++
			i++
			continue
		}
		dw, dr := unescapeAt(out[w:], raw, i)
		w += dw
		i += dr
	}
	return string(out[:w])
}

// rawStringEnd finds the closing quote of the string that starts at s.b[s.i]
// (a '"') without checking its characters, and consumes the string. It
// returns the raw body. A quote preceded by an odd number of backslashes is
// escaped; counting never goes back past the previous quote, so the scan is
// linear. The body must be checked later (decodeContent, validStringBody).
func (s *scanner) rawStringEnd() ([]byte, bool) {
	start := s.i + 1
	for p := start; ; {
		j := bytes.IndexByte(s.b[p:], '"')
		if j < 0 {
			return nil, false
		}
		q := p + j
		k := q
		for k > start && s.b[k-1] == '\\' {
			k--
		}
		if (q-k)%2 == 0 {
			s.i = q + 1
			return s.b[start:q], true
		}
		p = q + 1
	}
}

// validStringBody reports whether raw (a string body found by rawStringEnd)
// is a valid JSON string body: no control characters, valid escapes, valid
// UTF-8.
func validStringBody(raw []byte) bool {
	q := make([]byte, 0, len(raw)+2)
	q = append(append(append(q, '"'), raw...), '"')
	s := scanner{b: q}
	_, _, ok := s.str()
	return ok && s.i == len(q)
}

// skipValue consumes one JSON value of any kind, checking it strictly.
func (s *scanner) skipValue() bool {
	var stack []byte // open containers: '{' or '['
	for {
		// A value.
		switch c := s.next(); {
		case c == '{':
			s.i++
			if len(stack) == maxDepth-1 { // the enclosing object counts too
				return false
			}
			if s.eat('}') {
				break
			}
			if !s.memberName() {
				return false
			}
			stack = append(stack, '{')
			continue
		case c == '[':
			s.i++
			if len(stack) == maxDepth-1 {
				return false
			}
			if s.eat(']') {
				break
			}
			stack = append(stack, '[')
			continue
		case c == '"':
			if _, _, ok := s.str(); !ok {
				return false
			}
		case c == 't':
			if !s.literal("true") {
				return false
			}
		case c == 'f':
			if !s.literal("false") {
				return false
			}
		case c == 'n':
			if !s.literal("null") {
				return false
			}
		case c == '-' || c >= '0' && c <= '9':
			if _, _, ok := s.number(); !ok {
				return false
			}
		default:
			return false
		}
		// After a value: close what ends here, or move to the next element.
		for {
			if len(stack) == 0 {
				return true
			}
			top := stack[len(stack)-1]
			if s.eat(',') {
				if top == '{' && !s.memberName() {
					return false
				}
				break
			}
			if (top == '{' && s.eat('}')) || (top == '[' && s.eat(']')) {
				stack = stack[:len(stack)-1]
				continue
			}
			return false
		}
	}
}

// memberName consumes `"name" :` and returns nothing; skipValue does not
// need names.
func (s *scanner) memberName() bool {
	if s.next() != '"' {
		return false
	}
	if _, _, ok := s.str(); !ok {
		return false
	}
	return s.eat(':')
}

// stringOrNull reads a string member value; null leaves it unset (nil), as
// encoding/json does for a pointer. Any other kind is a type error.
func (s *scanner) stringOrNull() (*string, bool) {
	switch s.next() {
	case '"':
		raw, esc, ok := s.str()
		if !ok {
			return nil, false
		}
		v := unquote(raw, esc)
		return &v, true
	case 'n':
		return nil, s.literal("null")
	}
	return nil, false
}

// intOrNull reads an integer member value that fits in an int64; null
// leaves it unset. A fraction, an exponent or an overflow is a type error,
// as it is for encoding/json decoding into an int64.
func (s *scanner) intOrNull() (*int64, bool) {
	switch c := s.next(); {
	case c == 'n':
		return nil, s.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		lit, isInt, ok := s.number()
		if !ok || !isInt {
			return nil, false
		}
		v, err := strconv.ParseInt(string(lit), 10, 64)
		if err != nil {
			return nil, false
		}
		return &v, true
	}
	return nil, false
}
