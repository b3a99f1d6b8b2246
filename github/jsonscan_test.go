package github

import (
	"errors"
	"strings"
	"testing"
)

// The scanner's deliberate departures from encoding/json (jsonscan.go):
// exact member names, no repeated member the decoder reads, strings of valid
// UTF-8. Each is refused as malformed, or, for a name that only differs in
// case, ignored.
func TestDecodeContentsStricterThanEncodingJSON(t *testing.T) {
	t.Parallel()
	const ok = `"type":"file","path":"a","size":0,"sha":"e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"`
	tests := []struct {
		name, body string
		want       error
	}{
		{"accepted as is", `{` + ok + `}`, nil},
		{"escaped member name", `{"t\u0079pe":"file","path":"a","size":0,"sha":"e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"}`, nil},
		{"repeated path", `{` + ok + `,"path":"a"}`, ErrUnavailable},
		{"repeated content", `{` + ok + `,"content":null,"content":null}`, ErrUnavailable},
		{"repeated unknown member", `{` + ok + `,"x":1,"x":2}`, nil},
		{"PATH is not path", `{"type":"file","PATH":"a","size":0,"sha":"e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"}`, ErrInconsistent},
		{"Type is not type", `{"Type":"file"}`, ErrUnavailable},
		{"invalid UTF-8 in a skipped string", `{` + ok + `,"name":"` + "\xff" + `"}`, ErrUnavailable},
		{"invalid UTF-8 in path", `{"type":"file","path":"` + "\xc0\xaf" + `","size":0}`, ErrUnavailable},
		{"lone surrogate becomes U+FFFD", `{"type":"file","path":"\udc00","size":0,"sha":"e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"}`, ErrInconsistent},
		{"size with a fraction", `{"type":"file","path":"a","size":0.0}`, ErrUnavailable},
		{"size with an exponent", `{"type":"file","path":"a","size":0e1}`, ErrUnavailable},
		{"size overflows", `{"type":"file","path":"a","size":9223372036854775808}`, ErrUnavailable},
		{"leading zero", `{` + ok + `,"x":01}`, ErrUnavailable},
		{"nesting at the limit", `{` + ok + `,"x":` + strings.Repeat("[", maxDepth-1) + strings.Repeat("]", maxDepth-1) + `}`, nil},
		{"nesting over the limit", `{` + ok + `,"x":` + strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth) + `}`, ErrUnavailable},
		{"raw control character in content of a dir", `{"type":"dir","content":"` + "\x01" + `"}`, ErrUnavailable},
		{"trailing comma", `{` + ok + `,}`, ErrUnavailable},
		{"empty object", `{}`, ErrUnavailable},
		{"unterminated content", `{` + ok + `,"content":"YQ==\"}`, ErrUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := decodeContents([]byte(tt.body), "a")
			if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
		})
	}
}
