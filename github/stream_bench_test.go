package github_test

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"testing"

	"heyaira/github"
)

// BenchmarkGetFileSHA256OneMiBGitHubOrder is a read of a 1 MiB file whose
// answer lists its members as GitHub does (content last), so the content is
// decoded and hashed while it arrives (stream.go), into a buffer of its own.
func BenchmarkGetFileSHA256OneMiBGitHubOrder(b *testing.B) {
	c, bind, size := benchOneMiB(b)
	for b.Loop() {
		f, _, err := c.GetFileSHA256(b.Context(), bind, "big.md", commit)
		if err != nil || f.Size != size {
			b.Fatal(err)
		}
	}
}

// BenchmarkWithFileOneMiBGitHubOrder is the same read as the document tool
// makes it, into a lent buffer (lend.go).
func BenchmarkWithFileOneMiBGitHubOrder(b *testing.B) {
	c, bind, size := benchOneMiB(b)
	for b.Loop() {
		err := c.WithFile(b.Context(), bind, "big.md", commit, func(f *github.File, _ [sha256.Size]byte) error {
			if f.Size != size {
				return fmt.Errorf("%d bytes", f.Size)
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}

func benchOneMiB(b *testing.B) (*github.Client, github.Binding, int) {
	srv, c, bind := setup(b)
	content := bytes.Repeat([]byte("abcdefghijklmno\n"), github.MaxFileSize/16)
	srv.AddFileInGitHubOrder("octo", "docs", commit, "big.md", content)
	if _, _, err := c.GetFileSHA256(b.Context(), bind, "big.md", commit); err != nil { // mint once
		b.Fatal(err)
	}
	b.SetBytes(int64(len(content)))
	b.ReportAllocs()
	return c, bind, len(content)
}
