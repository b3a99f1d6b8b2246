package github_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"heyaira/github"
	"heyaira/github/githubtest"
)

func TestGetFile(t *testing.T) {
	t.Parallel()
	srv, c, b := setup(t)
	content := []byte("# Continuity\n\nRead me first. ✓\n")
	srv.AddFile("octo", "docs", commit, "docs/CONTINUITY.md", content)

	got, err := c.GetFile(t.Context(), b, "docs/CONTINUITY.md", commit)
	if err != nil {
		t.Fatal(err)
	}
	want := &github.File{Path: "docs/CONTINUITY.md", BlobSHA: githubtest.BlobSHA(content), Size: len(content), Content: content,
		SHA256: sha256.Sum256(content)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("GetFile mismatch (-want +got):\n%s", diff)
	}

	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("fake saw %d requests, want a mint and one contents request", len(reqs))
	}
	mint, read := reqs[0], reqs[1]
	if diff := cmp.Diff(githubtest.Request{
		Route: githubtest.RouteMint, Method: "POST", Path: "/app/installations/" + itoa(b.InstallationID) + "/access_tokens",
		Accept: "application/vnd.github+json", APIVersion: "2022-11-28", UserAgent: "heyaira-f1",
		HasAuthorization: true, AuthorizationSHA256: mint.AuthorizationSHA256, Auth: githubtest.AuthJWT, Status: 201,
	}, mint); diff != "" {
		t.Errorf("mint request mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(githubtest.Request{
		Route: githubtest.RouteContents, Method: "GET", Path: "/repos/octo/docs/contents/docs/CONTINUITY.md", Query: "ref=" + commit,
		Accept: "application/vnd.github.object+json", APIVersion: "2022-11-28", UserAgent: "heyaira-f1",
		HasAuthorization: true, AuthorizationSHA256: read.AuthorizationSHA256, Auth: githubtest.AuthToken, Status: 200,
	}, read); diff != "" {
		t.Errorf("contents request mismatch (-want +got):\n%s", diff)
	}

	// A second read reuses the cached token: one more request, no mint.
	if _, err := c.GetFile(t.Context(), b, "docs/CONTINUITY.md", commit); err != nil {
		t.Fatal(err)
	}
	if n, m := srv.Count(githubtest.RouteContents), srv.Count(githubtest.RouteMint); n != 2 || m != 1 {
		t.Errorf("after two reads: %d contents requests and %d mints, want 2 and 1", n, m)
	}
}

// Row IN-06 (docs/security-tests.md).
func TestGetFileAccepts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		content []byte
	}{
		{"exactly 1 MiB", bytes.Repeat([]byte("abcdefghijklmno\n"), github.MaxFileSize/16)},
		{"empty", []byte{}},
		{"UTF-8 BOM, kept as is", []byte("\xef\xbb\xbf# Title\n")},
		{"4-byte runes", []byte(strings.Repeat("😀", 1000))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv, c, b := setup(t)
			srv.AddFile("octo", "docs", commit, "f.md", tt.content)
			f, err := c.GetFile(t.Context(), b, "f.md", commit)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(f.Content, tt.content) || f.Size != len(tt.content) {
				t.Errorf("got %d bytes, want %d", len(f.Content), len(tt.content))
			}
		})
	}
}

// TestGetFileRefused covers every content and object check through the
// fake, each with its stable code.
// Rows IN-04, IN-05, IN-06 (docs/security-tests.md).
func TestGetFileRefused(t *testing.T) {
	t.Parallel()
	text := []byte("hello\n")
	tests := []struct {
		name  string
		setup func(s *githubtest.Server)
		code  string
	}{
		{"directory", func(s *githubtest.Server) { s.AddDir("octo", "docs", commit, "f.md", "a.md", "b.md") }, "document_not_file"},
		{"symlink", func(s *githubtest.Server) { s.AddSymlink("octo", "docs", commit, "f.md", "/etc/passwd") }, "document_not_file"},
		{"submodule", func(s *githubtest.Server) {
			s.AddSubmodule("octo", "docs", commit, "f.md", "git://github.com/jquery/qunit.git", "6ca3721222109997540bd6d9ccd396902e0ad2f9")
		}, "document_not_file"},
		{"followed symlink (link's blob sha)", func(s *githubtest.Server) {
			s.AddFollowedSymlink("octo", "docs", commit, "f.md", "secret/target.md", []byte("target text\n"))
		}, "provider_inconsistent"},
		{"followed symlink (target's path)", refuse(text, func(o map[string]any) { o["path"] = "secret/target.md" }), "provider_inconsistent"},
		{"size over 1 MiB, before decoding", refuse(text, func(o map[string]any) {
			o["size"], o["content"] = github.MaxFileSize+1, "!!! not base64, never decoded !!!"
		}), "document_too_large"},
		{"encoding none", refuse(text, func(o map[string]any) { o["size"], o["encoding"], o["content"] = 1240000, "none", "" }), "document_too_large"},
		{"blob sha mismatch", refuse(text, func(o map[string]any) { o["sha"] = githubtest.BlobSHA([]byte("other")) }), "provider_inconsistent"},
		{"size below decoded length", refuse(text, func(o map[string]any) { o["size"] = 3 }), "provider_inconsistent"},
		{"size above decoded length", refuse(text, func(o map[string]any) { o["size"] = 300 }), "provider_inconsistent"},
		{"invalid base64", refuse(text, func(o map[string]any) { o["content"] = "aGVs*G8K" }), "provider_inconsistent"},
		{"invalid UTF-8", func(s *githubtest.Server) { s.AddFile("octo", "docs", commit, "f.md", []byte("caf\xe9")) }, "document_not_utf8"},
		{"NUL byte", func(s *githubtest.Server) { s.AddFile("octo", "docs", commit, "f.md", []byte("a\x00b")) }, "document_not_utf8"},
		{"missing", func(s *githubtest.Server) {}, "provider_not_found"},
		{"other commit only", func(s *githubtest.Server) {
			s.AddFile("octo", "docs", strings.Repeat("f", 40), "f.md", text)
		}, "provider_not_found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv, c, b := setup(t)
			tt.setup(srv)
			f, err := c.GetFile(t.Context(), b, "f.md", commit)
			wantCode(t, err, tt.code)
			if f != nil {
				t.Error("file returned with an error")
			}
			if n := srv.Count(githubtest.RouteContents); n != 1 {
				t.Errorf("%d contents requests, want exactly 1", n)
			}
		})
	}
}

// refuse stores f.md as a file object altered by change.
func refuse(content []byte, change func(map[string]any)) func(*githubtest.Server) {
	return func(s *githubtest.Server) {
		obj := s.FileObject("octo", "docs", commit, "f.md", content)
		change(obj)
		s.AddObject("octo", "docs", commit, "f.md", obj)
	}
}

// TestGetFileEscapesEachSegment checks the raw request path: each segment is
// escaped on its own, and NFC and NFD spellings stay distinct files.
// Row IN-03 (docs/security-tests.md).
func TestGetFileEscapesEachSegment(t *testing.T) {
	t.Parallel()
	paths := []string{
		"docs/a b.md", "docs/a#b.md", "docs/a?b=c.md", "docs/100%.md", "docs/café.md", "docs/cafe\u0301.md",
		"-x/;+@:,$&=.md", "a/b/c/d/e.md", "ü/ß/日本.md",
	}
	srv, c, b := setup(t)
	for i, p := range paths {
		srv.AddFile("octo", "docs", commit, p, []byte(p+" "+itoa(int64(i))))
	}
	for i, p := range paths {
		f, err := c.GetFile(t.Context(), b, p, commit)
		if err != nil {
			t.Fatalf("GetFile(%q): %v", p, err)
		}
		if want := p + " " + itoa(int64(i)); string(f.Content) != want {
			t.Errorf("GetFile(%q) read %q, want %q", p, f.Content, want)
		}
	}
	var got, want []string
	for _, r := range srv.Requests() {
		if r.Route == githubtest.RouteContents {
			got = append(got, r.Path+"?"+r.Query)
		}
	}
	for _, p := range paths {
		want = append(want, "/repos/octo/docs/contents/"+github.EscapeSegments(p)+"?ref="+commit)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("raw request paths (-want +got):\n%s", diff)
	}
	if want := "/repos/octo/docs/contents/docs/a%20b.md"; got[0] != want+"?ref="+commit {
		t.Errorf("space escaped as %q", got[0])
	}
	if !strings.Contains(got[1], "a%23b.md") || !strings.Contains(got[2], "a%3Fb=c.md") || !strings.Contains(got[3], "100%25.md") ||
		!strings.Contains(got[4], "caf%C3%A9.md") {
		t.Errorf("#, ?, %%, é not escaped: %q", got[:5])
	}
}

// TestRefusedBeforeAnyRequest checks input validation happens before I/O.
// Row IN-01 (docs/security-tests.md).
func TestRefusedBeforeAnyRequest(t *testing.T) {
	t.Parallel()
	srv, c, b := setup(t)
	tests := []struct {
		name, path, sha string
		b               github.Binding
		code            string
	}{
		{"dot-dot", "docs/../secret.md", commit, b, "path_invalid"},
		{"dot", "docs/./a.md", commit, b, "path_invalid"},
		{"leading slash", "/docs/a.md", commit, b, "path_invalid"},
		{"empty segment", "docs//a.md", commit, b, "path_invalid"},
		{"trailing slash", "docs/", commit, b, "path_invalid"},
		{"backslash", `docs\a.md`, commit, b, "path_invalid"},
		{"percent-escape", "docs/%2e%2e/a.md", commit, b, "path_invalid"},
		{"encoded slash", "docs%2Fa.md", commit, b, "path_invalid"},
		{"control", "docs/a\n.md", commit, b, "path_invalid"},
		{"empty path", "", commit, b, "path_invalid"},
		{"branch instead of sha", "a.md", "main", b, "invalid_argument"},
		{"short sha", "a.md", commit[:7], b, "invalid_argument"},
		{"owner traversal", "a.md", commit, github.Binding{Owner: "..", Repo: "docs", InstallationID: 1}, "invalid_argument"},
		{"repo with slash", "a.md", commit, github.Binding{Owner: "octo", Repo: "docs/../x", InstallationID: 1}, "invalid_argument"},
	}
	for _, tt := range tests {
		_, err := c.GetFile(t.Context(), tt.b, tt.path, tt.sha)
		t.Run(tt.name, func(t *testing.T) { wantCode(t, err, tt.code) })
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("fake saw %d requests, want 0", n)
	}
}

// Row PF-09 (docs/security-tests.md).
func TestUnconfigured(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t)
	b := srv.Binding("octo", "docs")
	srv.AddFile("octo", "docs", commit, "a.md", []byte("x"))
	srv.SetBranch("octo", "docs", "main", commit)
	tests := []struct {
		name string
		c    *github.Client
		b    github.Binding
	}{
		{"zero config", github.NewClient(github.Config{}), b},
		{"no App ID", srv.Client(func(c *github.Config) { c.AppID = "" }), b},
		{"no key", srv.Client(func(c *github.Config) { c.Key = nil }), b},
		{"no installation", srv.Client(), github.Binding{Owner: "octo", Repo: "docs"}},
		{"plain http base URL", srv.Client(func(c *github.Config) { c.BaseURL = strings.Replace(c.BaseURL, "https:", "http:", 1) }), b},
		{"base URL with a query", srv.Client(func(c *github.Config) { c.BaseURL += "?x=1" }), b},
		{"nil client", nil, b},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.c.GetFile(context.Background(), tt.b, "a.md", commit)
			wantCode(t, err, "provider_unconfigured")
			_, err = tt.c.ResolveBranch(context.Background(), tt.b, "main")
			wantCode(t, err, "provider_unconfigured")
		})
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("fake saw %d requests, want 0", n)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestHooksAndCallerClient checks the metrics hooks, and that NewClient
// leaves the caller's *http.Client as it was while never following redirects.
func TestHooksAndCallerClient(t *testing.T) {
	t.Parallel()
	type call struct {
		route  string
		status int
	}
	var (
		mu    sync.Mutex
		calls []call
		mints int
	)
	srv := githubtest.New(t)
	cfg := srv.Config(func(c *github.Config) {
		c.OnRequest = func(route string, status int, d time.Duration) {
			mu.Lock()
			defer mu.Unlock()
			calls = append(calls, call{route, status})
		}
		c.OnMint = func() { mu.Lock(); mints++; mu.Unlock() }
	})
	c := github.NewClient(cfg)
	if cfg.HTTP.CheckRedirect != nil {
		t.Error("NewClient changed the caller's http.Client")
	}
	b := srv.Binding("octo", "docs")
	srv.AddFile("octo", "docs", commit, "a.md", []byte("x"))
	srv.SetBranch("octo", "docs", "main", commit)
	if _, err := c.GetFile(t.Context(), b, "a.md", commit); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ResolveBranch(t.Context(), b, "main"); err != nil {
		t.Fatal(err)
	}
	_, err := c.GetFile(t.Context(), b, "missing.md", commit)
	wantCode(t, err, "provider_not_found")
	mu.Lock()
	defer mu.Unlock()
	want := []call{{"access_tokens", 201}, {"contents", 200}, {"git_ref", 200}, {"contents", 404}}
	if diff := cmp.Diff(want, calls, cmp.AllowUnexported(call{})); diff != "" {
		t.Errorf("OnRequest calls (-want +got):\n%s", diff)
	}
	if mints != 1 {
		t.Errorf("OnMint called %d times, want 1", mints)
	}
}
