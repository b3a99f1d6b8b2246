package cursor

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// checkInvalid fails unless Decode(s) is exactly ErrInvalid with a zero
// Cursor and an error text that cannot echo s.
func checkInvalid(tb testing.TB, c *Codec, s string, now time.Time) {
	tb.Helper()
	cur, err := c.Decode(s, now)
	if err != ErrInvalid || cur != (Cursor{}) {
		tb.Fatalf("Decode(%.40q…) = %+v, %v; want zero Cursor, ErrInvalid", s, cur, err)
	}
	if err.Error() != "cursor: invalid" {
		tb.Fatalf("error text %q", err)
	}
}

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	c := newTestCodec(t)
	now := vectorNow
	for _, cur := range []Cursor{
		docCursor(),
		{Kind: "memory_list", Project: "p", Principal: "u", Path: "k", Expires: now.Add(time.Minute)},
		{Kind: "task_list", Expires: now.Add(time.Second)},
		{Kind: "document", Path: strings.Repeat("a/", 512), Offset: math.MaxInt64, Expires: now.Add(time.Hour)},
	} {
		t.Run(cur.Kind, func(t *testing.T) {
			t.Parallel()
			s := c.Encode(cur)
			got, err := c.Decode(s, now)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if diff := cmp.Diff(cur, got); diff != "" {
				t.Errorf("Decode(Encode(cur)) mismatch (-want +got):\n%s", diff)
			}
			if s2 := c.Encode(got); s2 != s {
				t.Errorf("Encode(Decode(s)) = %q, want %q", s2, s)
			}
		})
	}
}

func TestExpiresSecondPrecision(t *testing.T) {
	t.Parallel()
	c := newTestCodec(t)
	cur := docCursor()
	cur.Expires = time.Date(2026, 1, 1, 1, 2, 3, 999_999_999, time.FixedZone("X", 3600))
	got, err := c.Decode(c.Encode(cur), vectorNow)
	if err != nil {
		t.Fatal(err)
	}
	if want := time.Date(2026, 1, 1, 0, 2, 3, 0, time.UTC); got.Expires != want {
		t.Errorf("Expires = %v, want %v (truncated, UTC)", got.Expires, want)
	}
}

// CU-06: accepted one second before the expiry, expired at it and after it.
// Row CU-06 (docs/security-tests.md).
func TestExpiryBoundary(t *testing.T) {
	t.Parallel()
	c := newTestCodec(t)
	issued := vectorNow
	cur := docCursor()
	cur.Expires = issued.Add(15 * time.Minute)
	s := c.Encode(cur)
	for _, tc := range []struct {
		at   time.Duration
		want error
	}{
		{-15 * time.Minute, nil},
		{-time.Second, nil},
		{-time.Nanosecond, nil},
		{0, ErrExpired},
		{time.Second, ErrExpired},
		{24 * time.Hour, ErrExpired},
	} {
		if _, err := c.Decode(s, cur.Expires.Add(tc.at)); err != tc.want {
			t.Errorf("Decode at expiry%+v = %v, want %v", tc.at, err, tc.want)
		}
	}
}

// Changing any one character of a valid or an expired cursor, to any other
// character, gives ErrInvalid: never success, never ErrExpired.
// Row CU-01 (docs/security-tests.md).
func TestSingleCharacterChange(t *testing.T) {
	t.Parallel()
	c := newTestCodec(t)
	cur := docCursor()
	others := base64URLAlphabet + "+/=.~ \n\r\t\x00\xff%"
	for _, tc := range []struct {
		name string
		now  time.Time
	}{
		{"valid", vectorNow},
		{"expired", cur.Expires.Add(time.Hour)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := c.Encode(cur)
			if _, err := c.Decode(s, tc.now); tc.name == "valid" && err != nil || tc.name == "expired" && err != ErrExpired {
				t.Fatalf("unaltered cursor: %v", err)
			}
			for i := range len(s) {
				for j := range len(others) {
					if others[j] == s[i] {
						continue
					}
					checkInvalid(t, c, s[:i]+others[j:j+1]+s[i+1:], tc.now)
				}
			}
		})
	}
}

// CU-01: every bit flip of the decoded bytes, truncation, extension and
// re-spellings are all ErrInvalid.
// Row CU-01 (docs/security-tests.md).
func TestTampering(t *testing.T) {
	t.Parallel()
	c := newTestCodec(t)
	// A cursor with '-' or '_' in it, so that the standard alphabet spells it
	// differently.
	cur := docCursor()
	for !strings.ContainsAny(c.Encode(cur), "-_") {
		cur.Offset++
	}
	s := c.Encode(cur)
	raw := mustRaw(t, s)
	t.Run("bit_flips", func(t *testing.T) {
		t.Parallel()
		for i := range len(raw) * 8 {
			r := append([]byte(nil), raw...)
			r[i/8] ^= 1 << (i % 8)
			checkInvalid(t, c, b64.EncodeToString(r), vectorNow)
		}
	})
	t.Run("shapes", func(t *testing.T) {
		t.Parallel()
		inputs := map[string]string{
			"empty":            "",
			"truncated_1":      s[:len(s)-1],
			"truncated_4":      s[:len(s)-4],
			"raw_truncated_1":  b64.EncodeToString(raw[:len(raw)-1]),
			"raw_appended_1":   b64.EncodeToString(append(raw[:len(raw):len(raw)], 0)),
			"std_base64":       base64.StdEncoding.EncodeToString(raw),
			"std_raw_base64":   base64.RawStdEncoding.EncodeToString(raw),
			"padded":           base64.URLEncoding.EncodeToString(raw),
			"64KiB":            strings.Repeat("A", 64<<10),
			"64KiB_of_cursors": strings.Repeat(s, 64<<10/len(s)),
			"doubled":          s + s,
			"quoted":           `"` + s + `"`,
			"bearer":           "Bearer " + s,
		}
		for _, ch := range base64URLAlphabet {
			inputs["appended_"+string(ch)] = s + string(ch)
		}
		for name, in := range inputs {
			t.Run(name, func(t *testing.T) {
				checkInvalid(t, c, in, vectorNow)
			})
		}
	})
}

// The length cap is checked before decoding: a 64 KiB input costs no
// allocation at all.
// Row CU-01 (docs/security-tests.md).
func TestLengthCapBeforeDecoding(t *testing.T) {
	c := newTestCodec(t)
	long := strings.Repeat("A", 64<<10)
	if n := testing.AllocsPerRun(100, func() { c.Decode(long, vectorNow) }); n != 0 {
		t.Errorf("Decode of a 64 KiB input made %v allocations, want 0", n)
	}
}

// CU-08: K2 signs, K1 still verifies; without K1 its cursors are invalid;
// an unknown key id or version is invalid, even when expired.
// Row CU-08 (docs/security-tests.md).
func TestKeyRotation(t *testing.T) {
	t.Parallel()
	k1, k2, k3 := testKey(t, "k1"), testKey(t, "k2"), testKey(t, "k3")
	old := mustCodec(t, k1)
	rotated := mustCodec(t, k2, k1)
	after := mustCodec(t, k2)
	cur := docCursor()

	s1 := old.Encode(cur)
	if got, err := rotated.Decode(s1, vectorNow); err != nil || got != cur {
		t.Errorf("rotated codec on a k1 cursor: %+v, %v; want the cursor", got, err)
	}
	s2 := rotated.Encode(cur)
	if !strings.HasPrefix(string(mustRaw(t, s2)), "\x01"+string(testID(k2))) {
		t.Errorf("rotated codec does not sign with its first key k2")
	}
	if _, err := after.Decode(s2, vectorNow); err != nil {
		t.Errorf("k2 cursor after removing k1: %v", err)
	}
	checkInvalid(t, after, s1, vectorNow)
	checkInvalid(t, rotated, mustCodec(t, k3).Encode(cur), vectorNow)
	checkInvalid(t, rotated, mustCodec(t, k3).Encode(cur), cur.Expires.Add(time.Hour))
	checkInvalid(t, after, s1, cur.Expires.Add(time.Hour))
	for _, v := range []byte{0, 2, 0xff} {
		checkInvalid(t, rotated, seal(k2, v, testID(k2), testBody(cur), "heyaira cursor v1\x00"), vectorNow)
	}
	if diff := cmp.Diff([]string{fmt.Sprintf("%x", testID(k2)), fmt.Sprintf("%x", testID(k1))}, rotated.KeyIDs()); diff != "" {
		t.Errorf("KeyIDs mismatch (-want +got):\n%s", diff)
	}
}

func mustCodec(tb testing.TB, keys ...[]byte) *Codec {
	tb.Helper()
	c, err := NewCodec(keys...)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// Kind is inside the MAC: the same fields under different kinds give
// different cursors, each decoding to its own kind, so the caller's Kind
// check separates the uses.
func TestKindSeparation(t *testing.T) {
	t.Parallel()
	c := newTestCodec(t)
	seen := map[string]string{}
	for _, kind := range []string{"document", "memory_list", "task_list"} {
		cur := docCursor()
		cur.Kind = kind
		s := c.Encode(cur)
		if other, dup := seen[s]; dup {
			t.Fatalf("kinds %q and %q encode to the same cursor", other, kind)
		}
		seen[s] = kind
		got, err := c.Decode(s, vectorNow)
		if err != nil || got.Kind != kind {
			t.Errorf("Decode of a %q cursor: Kind %q, %v", kind, got.Kind, err)
		}
	}
}

// Length prefixes make field boundaries unambiguous: moving bytes from one
// field to the next changes the cursor, and each decodes to its own fields.
func TestFieldBoundaries(t *testing.T) {
	t.Parallel()
	c := newTestCodec(t)
	exp := vectorNow.Add(time.Minute)
	curs := []Cursor{
		{Kind: "ab", Project: "c", Expires: exp},
		{Kind: "a", Project: "bc", Expires: exp},
		{Kind: "abc", Expires: exp},
		{Project: "abc", Expires: exp},
		{Path: "x", FileSHA256: "", Expires: exp},
		{Path: "", FileSHA256: "x", Expires: exp},
		{Path: "\x00\x01", Expires: exp},
		{Path: "", Commit: "\x00\x01", Expires: exp},
	}
	seen := map[string]int{}
	for i, cur := range curs {
		s := c.Encode(cur)
		if j, dup := seen[s]; dup {
			t.Errorf("cursors %d and %d encode the same", j, i)
		}
		seen[s] = i
		got, err := c.Decode(s, vectorNow)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(cur, got); diff != "" {
			t.Errorf("cursor %d mismatch (-want +got):\n%s", i, diff)
		}
	}
}

// Row CU-07 (docs/security-tests.md).
func TestEncodePanics(t *testing.T) {
	t.Parallel()
	c := newTestCodec(t)
	for name, cur := range map[string]Cursor{
		"negative_offset": {Offset: -1, Expires: vectorNow},
		"zero_expires":    {},
		"year_10000":      {Expires: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)},
		"too_long":        {Path: strings.Repeat("p", 3006), Expires: vectorNow},
		"field_over_64k":  {Path: strings.Repeat("p", 70000), Expires: vectorNow},
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("Encode did not panic")
				}
			}()
			c.Encode(cur)
		})
	}
	// The largest cursor that fits: 3005 bytes of strings.
	s := c.Encode(Cursor{Path: strings.Repeat("p", 3005), Expires: vectorNow})
	if len(s) != MaxLen {
		t.Errorf("largest cursor is %d characters, want MaxLen", len(s))
	}
	if _, err := c.Decode(s, time.Time{}); err != nil {
		t.Errorf("largest cursor: %v", err)
	}
	checkInvalid(t, c, s+"A", time.Time{})
	checkInvalid(t, c, strings.Repeat("A", MaxLen+1), time.Time{})
}

func TestNewCodec(t *testing.T) {
	t.Parallel()
	k1, k2 := testKey(t, "k1"), testKey(t, "k2")
	for name, keys := range map[string][][]byte{
		"none":      nil,
		"short":     {k1[:31]},
		"short_2nd": {k1, make([]byte, 16)},
		"duplicate": {k1, k2, append([]byte(nil), k1...)},
	} {
		if _, err := NewCodec(keys...); err == nil {
			t.Errorf("NewCodec(%s) succeeded", name)
		}
	}
	// The codec keeps its own copy of the keys.
	k := append([]byte(nil), k1...)
	c := mustCodec(t, k)
	s := c.Encode(docCursor())
	clear(k)
	if _, err := c.Decode(s, vectorNow); err != nil {
		t.Errorf("after the caller cleared its key slice: %v", err)
	}
}

// Printing a codec, however it is formatted, shows no key material.
// Row LG-01 (docs/security-tests.md).
func TestCodecStringHidesKeys(t *testing.T) {
	t.Parallel()
	c := newTestCodec(t)
	out := fmt.Sprintf("%v %+v %#v %s", c, c, c, []any{c})
	for _, name := range []string{"k1", "k2"} {
		k := testKey(t, name)
		for _, enc := range []string{testKeys[name], base64.StdEncoding.EncodeToString(k), string(k)} {
			if strings.Contains(out, enc) {
				t.Errorf("formatted codec contains key %s: %s", name, out)
			}
		}
	}
}

func TestErrorsAreSentinels(t *testing.T) {
	t.Parallel()
	if errors.Is(ErrInvalid, ErrExpired) || errors.Is(ErrExpired, ErrInvalid) {
		t.Error("ErrInvalid and ErrExpired overlap")
	}
	if ErrInvalid.Error() != "cursor: invalid" || ErrExpired.Error() != "cursor: expired" {
		t.Error("sentinel texts changed")
	}
}
