package cursor

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Row CU-08 (docs/security-tests.md).
func TestParseKeys(t *testing.T) {
	t.Parallel()
	k1, k2 := testKey(t, "k1"), testKey(t, "k2")
	id1, id2 := fmt.Sprintf("%x", testID(k1)), fmt.Sprintf("%x", testID(k2))
	long := append(append([]byte(nil), k1...), k2...) // 64 bytes
	idLong := fmt.Sprintf("%x", testID(long))
	for _, tc := range []struct {
		name, file string
		want       []string
	}{
		{"hex", testKeys["k2"] + "\n", []string{id2}},
		{"hex_upper", strings.ToUpper(testKeys["k2"]), []string{id2}},
		{"std", base64.StdEncoding.EncodeToString(k1), []string{id1}},
		{"std_raw", base64.RawStdEncoding.EncodeToString(k1), []string{id1}},
		{"url", base64.URLEncoding.EncodeToString(k1), []string{id1}},
		{"url_raw", base64.RawURLEncoding.EncodeToString(k1), []string{id1}},
		{"64_bytes", base64.StdEncoding.EncodeToString(long), []string{idLong}},
		{"128_hex", fmt.Sprintf("%x", long), []string{idLong}},
		{"rotation_order", testKeys["k2"] + "\n" + testKeys["k1"] + "\n", []string{id2, id1}},
		{"comments_blanks_crlf", "# cursor keys\r\n\r\n  " + testKeys["k1"] + "  \r\n#old\r\n\t" +
			base64.StdEncoding.EncodeToString(k2) + "\r\n\n", []string{id1, id2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := ParseKeys([]byte(tc.file))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, c.KeyIDs()); diff != "" {
				t.Errorf("KeyIDs mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// Row CR-01 (docs/security-tests.md).
func TestParseKeysErrors(t *testing.T) {
	t.Parallel()
	k1 := testKey(t, "k1")
	short := base64.StdEncoding.EncodeToString(k1[:16])
	for _, tc := range []struct {
		name, file, wantErr string
	}{
		{"empty", "", "no key"},
		{"only_comments", "# nothing\n\n#\n", "no key"},
		{"short_base64", "#\n" + short, "line 2: key is 16 bytes"},
		{"short_hex", testKeys["k1"][:62], "line 1: key is 31 bytes"},
		{"odd_hex", testKeys["k1"] + "a", "odd number of hex digits"},
		{"bad_char", base64.StdEncoding.EncodeToString(k1)[:40] + "!!!!", "not base64 or hex"},
		{"mixed_alphabets", "+-" + base64.RawStdEncoding.EncodeToString(k1)[2:], "not base64 or hex"},
		{"inner_space", testKeys["k1"][:32] + " " + testKeys["k1"][32:], "space inside"},
		{"duplicate", testKeys["k1"] + "\n" + base64.StdEncoding.EncodeToString(k1), "repeats"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := ParseKeys([]byte(tc.file))
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("ParseKeys error = %v, want one containing %q", err, tc.wantErr)
			}
			// Errors name lines, never their contents.
			for _, line := range strings.Fields(tc.file) {
				if len(line) >= 8 && strings.Contains(err.Error(), line[:8]) {
					t.Errorf("error %q echoes key material", err)
				}
			}
		})
	}
}
