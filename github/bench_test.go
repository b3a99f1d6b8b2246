package github_test

import (
	"bytes"
	"testing"

	"heyaira/github"
)

// BenchmarkGetFile1MiB reads a 1,048,576-byte file through the fake over
// loopback TLS with a cached token: one request, a ~1.45 MB JSON body, base64
// decoding, the blob SHA-1 and the UTF-8 check.
func BenchmarkGetFile1MiB(b *testing.B) {
	srv, c, bind := setup(b)
	content := bytes.Repeat([]byte("abcdefghijklmno\n"), github.MaxFileSize/16)
	srv.AddFile("octo", "docs", commit, "big.md", content)
	if _, err := c.GetFile(b.Context(), bind, "big.md", commit); err != nil { // mint once
		b.Fatal(err)
	}
	b.SetBytes(int64(len(content)))
	b.ReportAllocs()
	for b.Loop() {
		f, err := c.GetFile(b.Context(), bind, "big.md", commit)
		if err != nil || f.Size != len(content) {
			b.Fatal(err)
		}
	}
}
