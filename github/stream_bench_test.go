package github_test

import (
	"bytes"
	"testing"

	"heyaira/github"
)

// BenchmarkGetFileSHA256OneMiBGitHubOrder is the document tool's read of a
// 1 MiB file whose answer lists its members as GitHub does (content last),
// so the content is decoded and hashed while it arrives (stream.go).
func BenchmarkGetFileSHA256OneMiBGitHubOrder(b *testing.B) {
	srv, c, bind := setup(b)
	content := bytes.Repeat([]byte("abcdefghijklmno\n"), github.MaxFileSize/16)
	srv.AddFileInGitHubOrder("octo", "docs", commit, "big.md", content)
	if _, _, err := c.GetFileSHA256(b.Context(), bind, "big.md", commit); err != nil { // mint once
		b.Fatal(err)
	}
	b.SetBytes(int64(len(content)))
	b.ReportAllocs()
	for b.Loop() {
		f, _, err := c.GetFileSHA256(b.Context(), bind, "big.md", commit)
		if err != nil || f.Size != len(content) {
			b.Fatal(err)
		}
	}
}
