package cursor

import "testing"

func BenchmarkEncode(b *testing.B) {
	c := newTestCodec(b)
	cur := docCursor()
	b.ReportAllocs()
	for b.Loop() {
		c.Encode(cur)
	}
}

func BenchmarkDecode(b *testing.B) {
	c := newTestCodec(b)
	s := c.Encode(docCursor())
	b.SetBytes(int64(len(s)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Decode(s, vectorNow); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeBadMAC is the cost of rejecting an altered cursor.
func BenchmarkDecodeBadMAC(b *testing.B) {
	c := newTestCodec(b)
	s := mutateRaw(b, c.Encode(docCursor()), func(raw []byte) { raw[100] ^= 1 })
	b.ReportAllocs()
	for b.Loop() {
		c.Decode(s, vectorNow)
	}
}
