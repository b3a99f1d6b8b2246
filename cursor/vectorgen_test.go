package cursor

import (
	"encoding/binary"
	"math"
	"strings"
	"testing"
	"time"
)

// vectorNow is the "now" of every vector unless it says otherwise.
var vectorNow = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// docCursor is a typical git_document_get continuation.
func docCursor() Cursor {
	return Cursor{
		Kind:       "document",
		Project:    "0f8e6b1c-3d2a-4c5b-9e7f-1a2b3c4d5e6f",
		Principal:  "5b0c2f7e-8a91-4d36-b2c4-7e9f0a1b2c3d",
		Source:     "9c7d3e2f-1b4a-4f58-a6c7-2d3e4f5a6b7c",
		Commit:     "9fceb02d0ae598e95dc970b74767f19372d61af8",
		Path:       "docs/CONTINUITY_PROTOCOL.md",
		Offset:     65536,
		FileSHA256: "b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9",
		Expires:    vectorNow.Add(15 * time.Minute),
	}
}

// generateVectors builds the vectors of testdata/vectors.txt. Inputs come
// from seal and testBody, not from encode, so the file checks encode against
// a second implementation.
func generateVectors(tb testing.TB) []vector {
	tb.Helper()
	var vs []vector
	ok := func(name, comment, key string, now time.Time, c Cursor) {
		vs = append(vs, vector{name: "success/" + name, comments: []string{comment}, expect: "success",
			now: now, key: key, want: c, input: sealWith(tb, key, testBody(c))})
	}
	fail := func(expect, name, comment, input string) {
		vs = append(vs, vector{name: strings.ReplaceAll(expect, " ", "_") + "/" + name,
			comments: []string{comment}, expect: expect, now: vectorNow, input: input})
	}

	doc := docCursor()
	valid := sealWith(tb, "k2", testBody(doc))
	ok("document_current_key", "a git_document_get continuation signed with the current key k2", "k2", vectorNow, doc)
	ok("document_previous_key", "the same cursor signed with the previous key k1: rotation keeps it valid", "k1", vectorNow, doc)

	mem := Cursor{Kind: "memory_list", Project: doc.Project, Principal: doc.Principal,
		Path: "notes/2026/plan.md", Expires: doc.Expires}
	ok("memory_list", "memory_list page cursor: Path is the last key seen; no source, commit or hash", "k2", vectorNow, mem)
	task := Cursor{Kind: "task_list", Project: doc.Project, Principal: doc.Principal,
		Path: "6d1f0c3a-2b4e-4a7d-8c9f-0e1d2c3b4a59", Expires: doc.Expires}
	ok("task_list", "task_list page cursor: Path is the last task id seen", "k2", vectorNow, task)
	ok("one_second_left", "decoded one second before expiry (expiry is exclusive)", "k2", doc.Expires.Add(-time.Second), doc)

	big := doc
	big.Offset = math.MaxInt64
	big.Path = "docs/日本語/ü🙂.md"
	ok("max_offset_utf8_path", "offset 2^63-1 and a multi-byte path: Decode accepts any offset >= 0; the caller checks it against the file", "k2", vectorNow, big)
	odd := Cursor{Path: "a\x00b\"c\n", Expires: time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)}
	ok("empty_fields_odd_path_max_expiry", "empty strings, a path with NUL, quote and newline, and the latest expiry allowed", "k2", vectorNow, odd)

	exp := func(name, comment, key string, now time.Time, c Cursor) {
		vs = append(vs, vector{name: "expired/" + name, comments: []string{comment}, expect: "expired",
			now: now, input: sealWith(tb, key, testBody(c))})
	}
	exp("at_expiry", "decoded exactly at its expiry", "k2", doc.Expires, doc)
	exp("one_second_late", "decoded one second after its expiry", "k2", doc.Expires.Add(time.Second), doc)
	exp("previous_key", "signed with the previous key k1 and expired", "k1", doc.Expires.Add(time.Hour), doc)
	epoch := doc
	epoch.Expires = time.Unix(0, 0)
	exp("epoch", "expires at the Unix epoch, the earliest expiry allowed", "k2", vectorNow, epoch)

	k2, k3 := testKey(tb, "k2"), testKey(tb, "k3")
	fail("bad mac", "unknown_key", "signed with k3, a key the codec does not hold",
		sealWith(tb, "k3", testBody(doc)))
	fail("bad mac", "wrong_key_for_id", "k2's key id with a MAC made with k3",
		seal(k3, 1, testID(k2), testBody(doc), "heyaira cursor v1\x00"))
	fail("bad mac", "offset_changed", "offset 65536 changed to 0 in a valid cursor without a new MAC",
		mutateRaw(tb, valid, func(raw []byte) { binary.BigEndian.PutUint64(raw[len(raw)-32-16:], 0) }))
	fail("bad mac", "mac_bit_flipped", "the last bit of the MAC of a valid cursor flipped",
		mutateRaw(tb, valid, func(raw []byte) { raw[len(raw)-1] ^= 1 }))
	expired := sealWith(tb, "k2", testBody(epoch))
	fail("bad mac", "expired_and_altered", "an expired cursor with one MAC bit flipped: the MAC is checked before the expiry",
		mutateRaw(tb, expired, func(raw []byte) { raw[len(raw)-5] ^= 0x10 }))
	fail("bad mac", "no_domain_label", "HMAC-SHA-256 with k2 over the bytes without the \"heyaira cursor v1\\x00\" label",
		seal(k2, 1, testID(k2), testBody(doc), ""))
	memValid := sealWith(tb, "k2", testBody(mem))
	fail("bad mac", "kind_changed", "a memory_list cursor whose kind bytes were overwritten with \"task_list__\" without a new MAC",
		mutateRaw(tb, memValid, func(raw []byte) { copy(raw[5+2:], "task_list__"[:len("memory_list")]) }))
	fail("bad mac", "mac_truncated", "a valid cursor with the last 16 MAC bytes removed",
		b64.EncodeToString(mustRaw(tb, valid)[:len(mustRaw(tb, valid))-16]))

	fail("malformed", "empty", "the empty string", "")
	fail("malformed", "impossible_length", "five characters: no byte string encodes to this length", "AAAAA")
	// The first offset after 65536 whose cursor has a '-' or '_' to respell.
	withDash := doc
	for !strings.ContainsAny(sealWith(tb, "k2", testBody(withDash)), "-_") {
		withDash.Offset++
	}
	dash := sealWith(tb, "k2", testBody(withDash))
	fail("malformed", "standard_alphabet", "a valid cursor respelled in the standard base64 alphabet (+ and /)",
		strings.NewReplacer("-", "+", "_", "/").Replace(dash))
	if len(valid)%4 == 0 {
		tb.Fatal("generateVectors: valid cursor needs no padding; change docCursor")
	}
	fail("malformed", "padded", "a valid cursor with base64 padding added", valid+strings.Repeat("=", 4-len(valid)%4))
	fail("malformed", "trailing_newline", "a valid cursor with a newline appended (decoders skip newlines)", valid+"\n")
	fail("malformed", "inner_crlf", "a valid cursor with CRLF inserted after 76 characters", valid[:76]+"\r\n"+valid[76:])
	fail("malformed", "leading_space", "a valid cursor with a leading space", " "+valid)
	fail("malformed", "non_ascii", "a valid cursor with a byte 0xff inserted", valid[:10]+"\xff"+valid[10:])
	fail("malformed", "nonzero_padding_bits", "a valid cursor whose last character differs only in bits the decoding ignores",
		valid[:len(valid)-1]+string(base64URLAlphabet[strings.IndexByte(base64URLAlphabet, valid[len(valid)-1])^1]))
	fail("malformed", "version_0", "authentic (k2 MAC over it), but version byte 0",
		seal(k2, 0, testID(k2), testBody(doc), "heyaira cursor v1\x00"))
	fail("malformed", "version_2", "authentic (k2 MAC over it), but version byte 2",
		seal(k2, 2, testID(k2), testBody(doc), "heyaira cursor v2\x00"))
	fail("malformed", "too_short", "version, key id and 16 bytes: shorter than any cursor",
		b64.EncodeToString(append([]byte{1}, append(testID(k2), make([]byte, 16)...)...)))
	fail("malformed", "trailing_byte", "authentic, with one byte after the body",
		sealWith(tb, "k2", append(testBody(doc), 0)))
	fail("malformed", "body_truncated", "authentic, with the expiry missing from the body",
		sealWith(tb, "k2", testBody(doc)[:len(testBody(doc))-8]))
	longLen := testBody(doc)
	binary.BigEndian.PutUint16(longLen, 0xffff)
	fail("malformed", "length_past_end", "authentic, with the kind's length prefix set to 65535",
		sealWith(tb, "k2", longLen))
	fail("malformed", "negative_offset", "authentic, with offset -1",
		sealWith(tb, "k2", withInts(testBody(doc), -1, doc.Expires.Unix())))
	fail("malformed", "expiry_after_9999", "authentic, with expiry 253402300800 (year 10000)",
		sealWith(tb, "k2", withInts(testBody(doc), doc.Offset, maxUnix+1)))
	fail("malformed", "negative_expiry", "authentic, with expiry -1 (before 1970)",
		sealWith(tb, "k2", withInts(testBody(doc), doc.Offset, -1)))
	return vs
}

const base64URLAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

// mutateRaw decodes a valid cursor, changes its bytes and re-encodes it.
func mutateRaw(tb testing.TB, s string, f func(raw []byte)) string {
	tb.Helper()
	raw := mustRaw(tb, s)
	f(raw)
	return b64.EncodeToString(raw)
}

// withInts replaces the offset and expiry at the end of a body.
func withInts(body []byte, off, exp int64) []byte {
	b := append([]byte(nil), body...)
	binary.BigEndian.PutUint64(b[len(b)-16:], uint64(off))
	binary.BigEndian.PutUint64(b[len(b)-8:], uint64(exp))
	return b
}
