package cursor

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// FuzzDecode: Decode never panics, fails only with the two sentinels and a
// zero Cursor, never echoes its input, and anything it accepts re-encodes, with
// the key that signed it, to exactly the same string.
// Row CU-01 (docs/security-tests.md).
func FuzzDecode(f *testing.F) {
	for _, v := range loadVectors(f) {
		f.Add(v.input, v.now.Unix())
	}
	c := newTestCodec(f)
	f.Fuzz(func(t *testing.T, s string, now int64) {
		cur, err := c.Decode(s, time.Unix(now, 0))
		if err != nil {
			if err != ErrInvalid && err != ErrExpired || cur != (Cursor{}) {
				t.Fatalf("Decode = %+v, %v; want zero Cursor and a sentinel", cur, err)
			}
			if len(s) > 16 && strings.Contains(err.Error(), s) {
				t.Fatalf("error %q echoes the input", err)
			}
			return
		}
		raw := mustRaw(t, s)
		k := c.byID[[idLen]byte(raw[1:headerLen])]
		if got := k.encode(cur); got != s {
			t.Fatalf("encode(Decode(%q)) = %q: cursor is malleable", s, got)
		}
		if k == c.keys[0] && c.Encode(cur) != s {
			t.Fatalf("Encode(Decode(%q)) differs: cursor is malleable", s)
		}
	})
}

// FuzzDecodeAuthentic signs arbitrary bodies with the test key, so the fuzzer
// reaches the parser that only authentic bytes get to: it accepts exactly the
// bodies that testBody would write, and they re-encode to the same string.
// Rows CU-01, CU-07 (docs/security-tests.md).
func FuzzDecodeAuthentic(f *testing.F) {
	for _, v := range loadVectors(f) {
		if v.expect == "success" {
			f.Add(testBody(v.want))
		}
	}
	f.Add(testBody(docCursor())[:20])
	f.Add(append(testBody(docCursor()), 0))
	f.Add(withInts(testBody(docCursor()), -1, maxUnix+1))
	c := newTestCodec(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		s := sealWith(t, "k2", body)
		// Far in the past, so every well-formed body is unexpired.
		cur, err := c.Decode(s, time.Time{})
		if err != nil {
			if err != ErrInvalid {
				t.Fatalf("Decode = %v, want ErrInvalid or success", err)
			}
			return
		}
		if !bytes.Equal(testBody(cur), body) {
			t.Fatalf("accepted body %x is not canonical (canonical: %x)", body, testBody(cur))
		}
		if got := c.Encode(cur); got != s {
			t.Fatalf("Encode(Decode(s)) = %q, want %q", got, s)
		}
	})
}
