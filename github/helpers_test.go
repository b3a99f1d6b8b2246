package github_test

import (
	"testing"
	"time"

	"heyaira/github"
	"heyaira/github/githubtest"
)

// commit is the pinned commit most tests read at.
const commit = "0123456789abcdef0123456789abcdef01234567"

// setup starts a fake GitHub and returns it, a client pointed at it, and a
// binding for octo/docs.
func setup(t testing.TB, opts ...githubtest.Option) (*githubtest.Server, *github.Client, github.Binding) {
	t.Helper()
	srv := githubtest.New(t)
	return srv, srv.Client(opts...), srv.Binding("octo", "docs")
}

// wantCode fails unless err wraps exactly one sentinel and it maps to code.
func wantCode(t testing.TB, err error, code string) {
	t.Helper()
	got, n := github.CodeOf(err)
	switch {
	case err == nil:
		t.Fatalf("err = nil, want %s", code)
	case n != 1:
		t.Fatalf("err %q matches %d sentinels, want exactly 1", err, n)
	case got != code:
		t.Fatalf("err %q has code %s, want %s", err, got, code)
	}
}

// withTimeout sets Config.Timeout.
func withTimeout(d time.Duration) githubtest.Option {
	return func(c *github.Config) { c.Timeout = d }
}
