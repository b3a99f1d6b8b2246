package github_test

import (
	"errors"
	"testing"
	"time"

	"heyaira/github"
	"heyaira/github/githubtest"
)

// tenants returns bindings for tenants A and B, reading octo/a and octo/b on
// the same installation, and C reading octo/a for nobody in particular.
func tenants(t *testing.T) (srv *githubtest.Server, c *github.Client, a, b, none github.Binding) {
	t.Helper()
	srv = githubtest.New(t)
	srv.AddFile("octo", "a", commit, "f.md", []byte("a"))
	srv.AddFile("octo", "b", commit, "f.md", []byte("b"))
	a, b = srv.Binding("octo", "a"), srv.Binding("octo", "b")
	if a.InstallationID != b.InstallationID {
		t.Fatal("octo/a and octo/b are on different installations")
	}
	none = a
	a.Tenant, b.Tenant = "A", "B"
	return srv, srv.Client(), a, b, none
}

// wantHeld checks that a read for binding is refused for exactly wait with
// no request sent.
func wantHeld(t *testing.T, srv *githubtest.Server, c *github.Client, binding github.Binding, wait time.Duration, what string) {
	t.Helper()
	before := srv.Count(githubtest.RouteContents)
	_, err := c.GetFile(t.Context(), binding, "f.md", commit)
	var rl *github.RateLimitError
	if !errors.As(err, &rl) || rl.RetryAfter != wait {
		t.Errorf("%s: err = %v, want a rate limit with RetryAfter %v", what, err, wait)
	}
	if n := srv.Count(githubtest.RouteContents) - before; n != 0 {
		t.Errorf("%s: %d requests sent while held", what, n)
	}
}

// wantRead checks that a read for binding reaches GitHub and succeeds.
func wantRead(t *testing.T, srv *githubtest.Server, c *github.Client, binding github.Binding, what string) {
	t.Helper()
	before := srv.Count(githubtest.RouteContents)
	if _, err := c.GetFile(t.Context(), binding, "f.md", commit); err != nil {
		t.Errorf("%s: %v", what, err)
	}
	if n := srv.Count(githubtest.RouteContents) - before; n != 1 {
		t.Errorf("%s: %d requests, want 1", what, n)
	}
}

// Row BT-23: a secondary rate limit answered to tenant A's request holds A
// for Retry-After and the installation only for the 5 s cool-down, so B
// reads once it is over while A still waits. A primary limit is the
// installation's hourly budget: it holds B too. Before the change every
// limit held the installation for its whole wait.
func TestBT23SecondaryLimitHoldsItsTenant(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name  string
		fault func(now time.Time) githubtest.Fault
		held  time.Duration // how long B is held after the cool-down
	}{
		{"403 Retry-After", func(time.Time) githubtest.Fault { return githubtest.RateLimitSecondary(60) }, 0},
		{"403 secondary message", func(time.Time) githubtest.Fault { return githubtest.RateLimitSecondary(0) }, 0},
		{"429 Retry-After", func(time.Time) githubtest.Fault { return githubtest.TooManyRequests(60) }, 0},
		{"primary", func(now time.Time) githubtest.Fault { return githubtest.RateLimitPrimary(now.Add(60 * time.Second)) }, 55 * time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv, c, a, b, _ := tenants(t)
			srv.InjectN(githubtest.RouteContents, 1, tt.fault(srv.Clock().Now()))
			_, err := c.GetFile(t.Context(), a, "f.md", commit)
			wantCode(t, err, "provider_rate_limited")
			wantHeld(t, srv, c, b, 5*time.Second+tt.held, "B at once")
			srv.Clock().Advance(5 * time.Second)
			if tt.held == 0 {
				wantRead(t, srv, c, b, "B after the cool-down")
			} else {
				wantHeld(t, srv, c, b, tt.held, "B after 5 s of a primary limit")
			}
			wantHeld(t, srv, c, a, 55*time.Second, "A after 5 s")
			srv.Clock().Advance(55 * time.Second)
			wantRead(t, srv, c, a, "A after its wait")
			wantRead(t, srv, c, b, "B after A's wait")
		})
	}
}

// Row BT-23: GitHub counts secondary limits per installation too. A second
// tenant limited while the first is held means the installation is
// limited: from then on it is held, for every tenant and for requests made
// for nobody, for the second answer's Retry-After. A limit on a request
// made for nobody holds the installation at once.
func TestBT23SecondaryLimitEscalates(t *testing.T) {
	t.Parallel()
	t.Run("second tenant", func(t *testing.T) {
		t.Parallel()
		srv, c, a, b, none := tenants(t)
		srv.InjectN(githubtest.RouteContents, 1, githubtest.RateLimitSecondary(60))
		srv.InjectN(githubtest.RouteContents, 1, githubtest.RateLimitSecondary(30))
		_, err := c.GetFile(t.Context(), a, "f.md", commit)
		wantCode(t, err, "provider_rate_limited")
		srv.Clock().Advance(5 * time.Second)
		_, err = c.GetFile(t.Context(), b, "f.md", commit)
		wantCode(t, err, "provider_rate_limited")
		wantCount(t, srv, githubtest.RouteContents, 2)
		wantHeld(t, srv, c, none, 30*time.Second, "nobody's request after the second tenant's limit")
		third := b
		third.Tenant = "C"
		wantHeld(t, srv, c, third, 30*time.Second, "a third tenant")
		srv.Clock().Advance(30 * time.Second)
		wantHeld(t, srv, c, a, 25*time.Second, "A, still in its own wait")
		wantRead(t, srv, c, b, "B after the installation's wait")
	})
	t.Run("nobody's request", func(t *testing.T) {
		t.Parallel()
		srv, c, a, _, none := tenants(t)
		srv.InjectN(githubtest.RouteContents, 1, githubtest.RateLimitSecondary(60))
		_, err := c.GetFile(t.Context(), none, "f.md", commit)
		wantCode(t, err, "provider_rate_limited")
		srv.Clock().Advance(5 * time.Second)
		wantHeld(t, srv, c, a, 55*time.Second, "a tenant after a limit for nobody")
	})
}
