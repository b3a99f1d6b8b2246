package github

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"net/url"
	"path"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzDecodeContents feeds arbitrary bodies to the contents decoder. On
// error exactly one sentinel matches and no file comes back; on success
// every guarantee of File holds, and re-encoding the file the way GitHub does
// decodes to the same bytes.
// Rows AS-02, IN-06, PF-11 (docs/security-tests.md).
func FuzzDecodeContents(f *testing.F) {
	for _, v := range vectors {
		f.Add(readVector(f, v.file), v.path)
	}
	f.Add(marshal(f, object("a", []byte("x"))), "a")
	f.Add([]byte(`{"type":"file","path":"a","size":0,"sha":"e69de29bb2d1d6434b8b29ae775ad8c2e48c5391","content":null}`), "a")
	f.Add([]byte(`{"type":"file","path":"a","size":1,"encoding":"base64","sha":"2e65efe2a145dda7ee51d1741299f848e5bf752e","content":"YQ==\n"}`), "a")
	f.Add([]byte(`{"type":"file","path":"a","size":1,"encoding":"base64","content":"Y\u0051==\\n"}`), "a")
	for _, seed := range decodeSeeds {
		f.Add([]byte(seed), "a")
	}
	f.Fuzz(func(t *testing.T, body []byte, wantPath string) {
		file, err := decodeContents(bytes.Clone(body), wantPath)
		if err != nil {
			if file != nil {
				t.Fatal("file != nil on error")
			}
			if _, n := CodeOf(err); n != 1 {
				t.Fatalf("error %v matches %d sentinels, want 1", err, n)
			}
			return
		}
		switch {
		case file.Path != wantPath:
			t.Fatalf("path %q, want %q", file.Path, wantPath)
		case file.Size != len(file.Content) || file.Size > MaxFileSize:
			t.Fatalf("size %d, content %d bytes", file.Size, len(file.Content))
		case !utf8.Valid(file.Content) || bytes.IndexByte(file.Content, 0) >= 0:
			t.Fatal("content is not NUL-free UTF-8")
		case blobSHA(file.Content) != file.BlobSHA:
			t.Fatal("blob SHA does not match content")
		case file.SHA256 != sha256.Sum256(file.Content):
			t.Fatal("SHA-256 does not match content")
		}
		again, err := decodeContents(marshal(t, object(wantPath, file.Content)), wantPath)
		if err != nil || !bytes.Equal(again.Content, file.Content) {
			t.Fatalf("re-encoded file does not decode to the same bytes: %v", err)
		}
	})
}

// pathSeeds are inputs for the path fuzzer and the table tests' corner cases.
var pathSeeds = []string{
	"docs/CONTINUITY_PROTOCOL.md", "a", "a/b c/d#e?f%g", "é/ü.md", "-x/;+@:,$&=.md",
	"", "/a", "a/", "a//b", "./a", "a/./b", "a/../b", "..", "a\\b", "a\x00b", "a\x7fb",
	"a\u0085b", "%2e%2e/x", "a%2Fb", "100%", "a%zz", "\xff", strings.Repeat("a", 1025),
}

// FuzzValidatePath checks that every path ValidatePath accepts is exactly
// the path GitHub receives: per-segment escaping, parsed back by net/url,
// gives the same path, no query or fragment, and path.Clean leaves it alone.
// Row IN-01 (docs/security-tests.md).
func FuzzValidatePath(f *testing.F) {
	for _, s := range pathSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		err := ValidatePath(p)
		if err != nil {
			if !errors.Is(err, ErrPathInvalid) {
				t.Fatalf("error %v is not ErrPathInvalid", err)
			}
			return
		}
		if len(p) > MaxPathBytes || path.Clean(p) != p || path.IsAbs(p) || p == ".." || strings.HasPrefix(p, "../") {
			t.Fatalf("accepted %q, which is not a clean relative path", p)
		}
		u, err := url.Parse("https://api.github.com/repos/o/r/contents/" + escapeSegments(p) + "?ref=x")
		if err != nil {
			t.Fatalf("escaped %q does not parse: %v", p, err)
		}
		if u.Path != "/repos/o/r/contents/"+p || u.RawQuery != "ref=x" || u.Fragment != "" || u.Host != "api.github.com" {
			t.Fatalf("path %q became %q ? %q # %q", p, u.Path, u.RawQuery, u.Fragment)
		}
	})
}

// FuzzValidateBranch checks that every accepted branch is a plain name that
// reaches git/ref/heads/ unchanged and can never name a tag.
// Row IN-01 (docs/security-tests.md).
func FuzzValidateBranch(f *testing.F) {
	for _, s := range []string{"main", "feat/x", "release-1.0", "ü", "refs/heads/main", "refs/tags/v1",
		"a..b", "a/.b", "a.lock", "-a", "a b", "a~1", "a^", "a:b", "a?", "a*", "a[", "a\\b", "@", "a@{1}", "a/", "a.", "HEAD", "%2e"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b string) {
		err := ValidateBranch(b)
		if err != nil {
			if !errors.Is(err, ErrBranchInvalid) {
				t.Fatalf("error %v is not ErrBranchInvalid", err)
			}
			return
		}
		if strings.HasPrefix(b, "refs/") || strings.Contains(b, "..") || strings.Contains(b, "//") || path.Clean(b) != b {
			t.Fatalf("accepted %q", b)
		}
		u, err := url.Parse("https://api.github.com/repos/o/r/git/ref/heads/" + escapeSegments(b))
		if err != nil || u.Path != "/repos/o/r/git/ref/heads/"+b || u.RawQuery != "" || u.Fragment != "" {
			t.Fatalf("branch %q did not survive the URL: %v", b, err)
		}
	})
}
