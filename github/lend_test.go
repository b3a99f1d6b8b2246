package github_test

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"testing"

	"heyaira/github"
	"heyaira/github/githubtest"
)

// TestWithFileLendsAndZeroes reads a file large enough to be decoded while
// it arrives (into a lent buffer) and a small one, through WithFile: the
// callback sees the verified file and its SHA-256, and once WithFile has
// returned, the large file's bytes are gone from the lent memory. Not
// parallel: once given back, the buffer may be lent to another test's read,
// and looking at it then would be the very misuse WithFile forbids (the race
// detector says so).
func TestWithFileLendsAndZeroes(t *testing.T) {
	srv, c, b := setup(t)
	large := bytes.Repeat([]byte("Große Ära — 😀 lent\n"), 400_000/22)
	small := []byte("# small\n")
	srv.AddFileInGitHubOrder("octo", "docs", commit, "large.md", large)
	srv.AddFile("octo", "docs", commit, "small.md", small)

	for _, content := range [][]byte{large, small, large} {
		path := map[bool]string{true: "large.md", false: "small.md"}[len(content) == len(large)]
		var kept []byte
		err := c.WithFile(t.Context(), b, path, commit, func(f *github.File, sum [sha256.Size]byte) error {
			if !bytes.Equal(f.Content, content) || sum != sha256.Sum256(content) || f.BlobSHA != githubtest.BlobSHA(content) {
				t.Errorf("%s: the callback got other content or hashes", path)
			}
			kept = f.Content // what a careless caller would keep
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if path == "large.md" && !bytes.Equal(kept, make([]byte, len(kept))) {
			t.Errorf("%s: the lent buffer still holds the document after WithFile returned", path)
		}
	}
}

// TestWithFileErrors: a read that fails never calls use; use's own error
// is returned as it is.
func TestWithFileErrors(t *testing.T) {
	t.Parallel()
	srv, c, b := setup(t)
	large := bytes.Repeat([]byte("lent and refused\n"), 300_000/17)
	obj := srv.FileObject("octo", "docs", commit, "bad.md", large)
	obj["sha"] = githubtest.BlobSHA([]byte("something else"))
	srv.AddObject("octo", "docs", commit, "bad.md", obj)
	srv.AddFileInGitHubOrder("octo", "docs", commit, "good.md", large)

	called := false
	err := c.WithFile(t.Context(), b, "bad.md", commit, func(*github.File, [sha256.Size]byte) error {
		called = true
		return nil
	})
	wantCode(t, err, "provider_inconsistent")
	if called {
		t.Error("use was called for a refused read")
	}
	errMine := errors.New("mine")
	if err := c.WithFile(t.Context(), b, "good.md", commit, func(*github.File, [sha256.Size]byte) error {
		return errMine
	}); err != errMine {
		t.Errorf("WithFile returned %v, want use's error", err)
	}
}
