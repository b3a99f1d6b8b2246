package tools

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"heyaira/server/mcp"
)

// Row IN-07 (docs/security-tests.md).
func TestFragmentEnd(t *testing.T) {
	t.Parallel()
	// "aé€😀": 1 + 2 + 3 + 4 bytes.
	content := []byte("aé€😀")
	tests := []struct {
		name         string
		start, limit int
		want         int
		wantCode     string
	}{
		{"whole", 0, 100, 10, ""},
		{"one byte", 0, 1, 1, ""},
		{"moves back inside é", 0, 2, 1, ""},
		{"é exactly", 1, 2, 3, ""},
		{"inside € moves back", 1, 4, 3, ""},
		{"start inside é", 2, 10, 0, "byte_range_invalid"},
		{"start inside 😀", 7, 10, 0, "byte_range_invalid"},
		{"limit smaller than 😀", 6, 3, 0, "byte_range_invalid"},
		{"start at total: empty final fragment", 10, 5, 10, ""},
		{"start beyond total", 11, 5, 0, "byte_range_invalid"},
		{"negative start", -1, 5, 0, "byte_range_invalid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := fragmentEnd(content, tt.start, tt.limit)
			if tt.wantCode != "" {
				var ce *mcp.CodedError
				if !errors.As(err, &ce) || ce.Code() != tt.wantCode {
					t.Fatalf("fragmentEnd(%d, %d) err = %v, want %s", tt.start, tt.limit, err, tt.wantCode)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("fragmentEnd(%d, %d) = %d, %v; want %d", tt.start, tt.limit, got, err, tt.want)
			}
		})
	}
}

// TestFragmentWalkReassembles cuts a mixed-width text with every small limit
// and checks that fragments are valid UTF-8, within the limit, contiguous, and
// together exactly the original.
// Row IN-07 (docs/security-tests.md).
func TestFragmentWalkReassembles(t *testing.T) {
	t.Parallel()
	content := []byte(strings.Repeat("a é € 😀\n", 50))
	for limit := 4; limit <= 40; limit++ {
		var got []byte
		for start := 0; start < len(content); {
			end, err := fragmentEnd(content, start, limit)
			if err != nil {
				t.Fatalf("limit %d start %d: %v", limit, start, err)
			}
			frag := content[start:end]
			if !utf8.Valid(frag) || len(frag) > limit || len(frag) == 0 {
				t.Fatalf("limit %d start %d: bad fragment %q", limit, start, frag)
			}
			got = append(got, frag...)
			start = end
		}
		if string(got) != string(content) {
			t.Fatalf("limit %d: reassembled text differs", limit)
		}
	}
}

func BenchmarkFragmentEnd(b *testing.B) {
	content := []byte(strings.Repeat("a é € 😀\n", 1<<20/16))
	for b.Loop() {
		for start := 0; start < len(content); {
			end, _ := fragmentEnd(content, start, 65536)
			start = end
		}
	}
}

// FuzzFragmentEnd checks the fragmenter on any valid UTF-8 text, start and
// limit: a fragment it returns is within bounds and the limit, valid UTF-8,
// ends on a character boundary, and is empty only at the end of the file;
// it refuses exactly the starts that are out of range or inside a
// character, and limits too small for the character at start.
// Row IN-07 (docs/security-tests.md).
func FuzzFragmentEnd(f *testing.F) {
	f.Add([]byte("aé€😀"), 0, 4)
	f.Add([]byte("aé€😀"), 1, 1)
	f.Add([]byte("😀😀"), 4, 3)
	f.Add([]byte(""), 0, 1)
	f.Add([]byte("abc"), 3, 65536)
	f.Fuzz(func(t *testing.T, content []byte, start, limit int) {
		if !utf8.Valid(content) || limit < 1 || limit > 1<<16 || start < -4 || start > len(content)+4 {
			return // preconditions: the provider checked the text, the caller bounds the limit
		}
		end, err := fragmentEnd(content, start, limit)
		inRange := start >= 0 && start <= len(content)
		if err != nil {
			if inRange && (start == len(content) || utf8.RuneStart(content[start])) {
				_, size := utf8.DecodeRune(content[start:])
				if start < len(content) && size <= limit {
					t.Fatalf("refused a valid start %d with limit %d: %v", start, limit, err)
				}
			}
			return
		}
		if !inRange || end < start || end > len(content) || end-start > limit {
			t.Fatalf("fragment [%d, %d) of %d bytes with limit %d", start, end, len(content), limit)
		}
		frag := content[start:end]
		if !utf8.Valid(frag) || (end < len(content) && !utf8.RuneStart(content[end])) {
			t.Fatalf("fragment [%d, %d) cuts a character", start, end)
		}
		if end == start && start != len(content) {
			t.Fatalf("empty fragment before the end at %d", start)
		}
	})
}
