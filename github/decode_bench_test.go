package github

import "testing"

// benchmarkDecode decodes and verifies a 1 MiB answer as GitHub encodes it.
// Decoding is in place, so each iteration first copies the 1.45 MB body into
// a reused buffer (a memmove, about a tenth of the total); the reference
// decoder gets the same copy.
func benchmarkDecode(b *testing.B, decode func([]byte, string) (*File, error)) {
	content := []byte(string(mixedMarkdown(MaxFileSize)))
	body := marshal(b, object("docs/big.md", content))
	buf := make([]byte, len(body))
	b.SetBytes(int64(len(content)))
	b.ReportAllocs()
	for b.Loop() {
		copy(buf, body)
		f, err := decode(buf, "docs/big.md")
		if err != nil || f.Size != len(content) {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeContents1MiB is the decoder the client uses, SHA-256 included.
func BenchmarkDecodeContents1MiB(b *testing.B) { benchmarkDecode(b, decodeContents) }

// BenchmarkDecodeContents1MiBReference is the plain oracle of
// decode_ref_test.go (whole-string unquote, a fresh output buffer).
func BenchmarkDecodeContents1MiBReference(b *testing.B) { benchmarkDecode(b, referenceDecodeContents) }

// mixedMarkdown is n bytes of Markdown-like text, mostly ASCII with some 2-,
// 3- and 4-byte characters, cut on a character boundary and padded with
// spaces to exactly n bytes.
func mixedMarkdown(n int) []byte {
	line := "## Section — notes on the protocol: keep état, ü, 中文 and 😀 intact.\n" +
		"The agent reads `docs/CONTINUITY_PROTOCOL.md` first, then follows next_cursor.\n"
	out := make([]byte, 0, n)
	for len(out)+len(line) <= n {
		out = append(out, line...)
	}
	for len(out) < n {
		out = append(out, ' ')
	}
	return out
}
