package github_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"heyaira/github"
	"heyaira/github/githubtest"
)

// TestJWTAndMintBody checks the App JWT (verified by the fake) and the mint
// body, by repository name and by repository ID.
// Rows PF-08, PF-09 (docs/security-tests.md).
func TestJWTAndMintBody(t *testing.T) {
	t.Parallel()
	for _, byID := range []bool{false, true} {
		name := map[bool]string{false: "by name", true: "by ID"}[byID]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv, c, b := setup(t)
			srv.AddFile("octo", "docs", commit, "a.md", []byte("x"))
			want := githubtest.MintRequest{
				Installation: b.InstallationID, Repositories: []string{"docs"},
				Permissions: map[string]string{"contents": "read"},
			}
			if byID {
				b.RepositoryID = srv.RepositoryID("octo", "docs")
				want.Repositories, want.RepositoryIDs = nil, []int64{b.RepositoryID}
			}
			if _, err := c.GetFile(t.Context(), b, "a.md", commit); err != nil {
				t.Fatal(err)
			}
			mints := srv.Mints()
			if len(mints) != 1 {
				t.Fatalf("%d mints, want 1", len(mints))
			}
			got := mints[0]
			now := got.Now.Unix()
			want.IAT, want.EXP, want.ISS, want.Now = now-60, now+300, githubtest.AppID, got.Now
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("mint mismatch (-want +got):\n%s", diff)
			}
			if n, e := srv.JWTFailures(), srv.EmptyRepositoryLists(); n != 0 || e != 0 {
				t.Errorf("%d JWT failures and %d empty repository lists, want 0", n, e)
			}
		})
	}
}

// TestTokenCacheTwoHours reads once a minute for two hours of fake time:
// 60-minute tokens replaced 5 minutes early give 3 ± 1 mints, and no
// request ever carries an expired token.
// Row PF-08 (docs/security-tests.md).
func TestTokenCacheTwoHours(t *testing.T) {
	t.Parallel()
	srv, c, b := setup(t)
	srv.AddFile("octo", "docs", commit, "a.md", []byte("x"))
	for range 121 {
		if _, err := c.GetFile(t.Context(), b, "a.md", commit); err != nil {
			t.Fatal(err)
		}
		srv.Clock().Advance(time.Minute)
	}
	if n := srv.Count(githubtest.RouteMint); n < 2 || n > 4 {
		t.Errorf("%d mints in 2 hours, want 3 ± 1", n)
	}
	for _, r := range srv.Requests() {
		if r.Route == githubtest.RouteContents && (r.Status != 200 || r.Auth != githubtest.AuthToken) {
			t.Errorf("contents request %+v, want 200 with a live minted token", r)
		}
	}
}

// TestTokenRefreshMargin pins the 5-minute margin: a token with more than 5
// minutes left is reused; one with 4 min 59 s left is replaced before use.
// Row PF-08 (docs/security-tests.md).
func TestTokenRefreshMargin(t *testing.T) {
	t.Parallel()
	srv, c, b := setup(t)
	srv.AddFile("octo", "docs", commit, "a.md", []byte("x"))
	read := func() {
		t.Helper()
		if _, err := c.GetFile(t.Context(), b, "a.md", commit); err != nil {
			t.Fatal(err)
		}
	}
	read()
	srv.Clock().Advance(55*time.Minute - time.Second) // 5 min 1 s left
	read()
	wantCount(t, srv, githubtest.RouteMint, 1)
	srv.Clock().Advance(2 * time.Second) // 4 min 59 s left
	read()
	wantCount(t, srv, githubtest.RouteMint, 2)
}

// TestConcurrentColdReadsMintOnce starts 100 reads on a cold cache.
// Row PF-08 (docs/security-tests.md).
func TestConcurrentColdReadsMintOnce(t *testing.T) {
	t.Parallel()
	srv, c, b := setup(t)
	srv.AddFile("octo", "docs", commit, "a.md", []byte("x"))
	srv.SetLatency(50 * time.Millisecond) // keep the mint in flight while all arrive
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for range 100 {
		wg.Go(func() {
			_, err := c.GetFile(t.Context(), b, "a.md", commit)
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	wantCount(t, srv, githubtest.RouteMint, 1)
	wantCount(t, srv, githubtest.RouteContents, 100)
}

// TestMintSurvivesCanceledCaller checks that the caller who started a mint
// can give up without failing the others waiting on it.
func TestMintSurvivesCanceledCaller(t *testing.T) {
	t.Parallel()
	srv, c, b := setup(t)
	srv.AddFile("octo", "docs", commit, "a.md", []byte("x"))
	srv.SetLatency(100 * time.Millisecond)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	minting := make(chan struct{})
	srv.BeforeN(githubtest.RouteMint, 1, func(*http.Request) { close(minting) })
	first := make(chan error, 1)
	go func() { _, err := c.GetFile(ctx, b, "a.md", commit); first <- err }()
	<-minting // the first caller's mint is at the fake, not a guess at scheduling
	if _, err := c.GetFile(t.Context(), b, "a.md", commit); err != nil {
		t.Fatalf("second caller: %v", err)
	}
	wantCode(t, <-first, "provider_unavailable")
	wantCount(t, srv, githubtest.RouteMint, 1)
}

// TestTokensPerRepository checks that each repository gets its own token.
// Row PF-08 (docs/security-tests.md).
func TestTokensPerRepository(t *testing.T) {
	t.Parallel()
	srv, c, a := setup(t)
	b := srv.Binding("octo", "site")
	srv.AddFile("octo", "docs", commit, "a.md", []byte("a"))
	srv.AddFile("octo", "site", commit, "a.md", []byte("b"))
	for _, bind := range []github.Binding{a, b, a, b} {
		if _, err := c.GetFile(t.Context(), bind, "a.md", commit); err != nil {
			t.Fatal(err)
		}
	}
	mints := srv.Mints()
	if len(mints) != 2 || mints[0].Repositories[0] != "docs" || mints[1].Repositories[0] != "site" {
		t.Errorf("mints %+v, want one for docs and one for site", mints)
	}
}

// TestRevokedTokenRetriedOnce: a 401 on a cached token drops it, mints a new
// one and retries once.
// Row PF-08 (docs/security-tests.md).
func TestRevokedTokenRetriedOnce(t *testing.T) {
	t.Parallel()
	srv, c, b := setup(t)
	srv.AddFile("octo", "docs", commit, "a.md", []byte("x"))
	if _, err := c.GetFile(t.Context(), b, "a.md", commit); err != nil {
		t.Fatal(err)
	}
	srv.RevokeTokens()
	if _, err := c.GetFile(t.Context(), b, "a.md", commit); err != nil {
		t.Fatalf("after revocation: %v", err)
	}
	var statuses []int
	for _, r := range srv.Requests() {
		if r.Route == githubtest.RouteContents {
			statuses = append(statuses, r.Status)
		}
	}
	if diff := cmp.Diff([]int{200, 401, 200}, statuses); diff != "" {
		t.Errorf("contents statuses (-want +got):\n%s", diff)
	}
	wantCount(t, srv, githubtest.RouteMint, 2)

	// A second 401 in a row is final: provider_forbidden, no third try.
	srv.InjectN(githubtest.RouteContents, 2, githubtest.Status(401, `{"message":"Bad credentials"}`))
	_, err := c.GetFile(t.Context(), b, "a.md", commit)
	wantCode(t, err, "provider_forbidden")
	wantCount(t, srv, githubtest.RouteContents, 5)
	wantCount(t, srv, githubtest.RouteMint, 3)
}

// TestMintFaults checks how a failed mint is reported, that no contents
// request follows it, and that a failure is not cached.
// Row PF-08 (docs/security-tests.md).
func TestMintFaults(t *testing.T) {
	t.Parallel()
	good := func(s *githubtest.Server, change func(map[string]any)) githubtest.Fault {
		resp := map[string]any{
			"token": "ghs_" + "0123456789abcdefghijklmnopqrstuvwxyz", "expires_at": s.Clock().Now().Add(time.Hour).UTC().Format(time.RFC3339),
			"permissions": map[string]string{"contents": "read", "metadata": "read"}, "repository_selection": "selected",
			"repositories": []map[string]any{{"id": s.RepositoryID("octo", "docs"), "name": "docs"}},
		}
		change(resp)
		return githubtest.JSON(201, resp)
	}
	tests := []struct {
		name    string
		fault   func(s *githubtest.Server) githubtest.Fault
		timeout time.Duration
		code    string
	}{
		{name: "500", fault: status(500, `{"message":"Server Error"}`), code: "provider_unavailable"},
		{name: "stall", fault: fixed(githubtest.Stall()), timeout: 200 * time.Millisecond, code: "provider_unavailable"},
		{name: "reset", fault: fixed(githubtest.Reset()), code: "provider_unavailable"},
		{name: "401 bad JWT", fault: status(401, `{"message":"A JSON web token could not be decoded"}`), code: "provider_forbidden"},
		{name: "403 suspended", fault: status(403, `{"message":"This installation has been suspended"}`), code: "provider_forbidden"},
		{name: "404 unknown installation", fault: status(404, `{"message":"Not Found"}`), code: "provider_forbidden"},
		{name: "422 repository not in installation", fault: status(422, `{"message":"There is at least one repository that does not exist"}`), code: "provider_forbidden"},
		{name: "429", fault: fixed(githubtest.TooManyRequests(10)), code: "provider_rate_limited"},
		{name: "307", fault: fixed(githubtest.Redirect(307, "https://evil.example/")), code: "provider_redirect_rejected"},
		{name: "body too large", fault: fixed(githubtest.Chunked(make([]byte, 300<<10))), code: "provider_response_too_large"},
		{name: "malformed", fault: status(201, `{"token":`), code: "provider_unavailable"},
		{name: "no token", fault: func(s *githubtest.Server) githubtest.Fault {
			return good(s, func(m map[string]any) { delete(m, "token") })
		}, code: "provider_inconsistent"},
		{name: "token with a space", fault: func(s *githubtest.Server) githubtest.Fault {
			return good(s, func(m map[string]any) { m["token"] = "ghs_a b" })
		}, code: "provider_inconsistent"},
		{name: "bad expires_at", fault: func(s *githubtest.Server) githubtest.Fault {
			return good(s, func(m map[string]any) { m["expires_at"] = "tomorrow" })
		}, code: "provider_inconsistent"},
		{name: "expired", fault: func(s *githubtest.Server) githubtest.Fault {
			return good(s, func(m map[string]any) { m["expires_at"] = s.Clock().Now().Add(-time.Minute).UTC().Format(time.RFC3339) })
		}, code: "provider_inconsistent"},
		{name: "write permission", fault: func(s *githubtest.Server) githubtest.Fault {
			return good(s, func(m map[string]any) { m["permissions"] = map[string]string{"contents": "write"} })
		}, code: "provider_inconsistent"},
		{name: "admin permission", fault: func(s *githubtest.Server) githubtest.Fault {
			return good(s, func(m map[string]any) {
				m["permissions"] = map[string]string{"contents": "read", "administration": "admin"}
			})
		}, code: "provider_inconsistent"},
		{name: "all repositories", fault: func(s *githubtest.Server) githubtest.Fault {
			return good(s, func(m map[string]any) { m["repository_selection"] = "all"; delete(m, "repositories") })
		}, code: "provider_inconsistent"},
		{name: "another repository", fault: func(s *githubtest.Server) githubtest.Fault {
			return good(s, func(m map[string]any) { m["repositories"] = []map[string]any{{"id": 1, "name": "other"}} })
		}, code: "provider_inconsistent"},
		{name: "two repositories", fault: func(s *githubtest.Server) githubtest.Fault {
			return good(s, func(m map[string]any) {
				m["repositories"] = []map[string]any{{"id": 1, "name": "docs"}, {"id": 2, "name": "other"}}
			})
		}, code: "provider_inconsistent"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			timeout := tt.timeout
			if timeout == 0 {
				timeout = 10 * time.Second
			}
			srv, c, b := setup(t, withTimeout(timeout))
			srv.AddFile("octo", "docs", commit, "a.md", []byte("x"))
			srv.InjectN(githubtest.RouteMint, 1, tt.fault(srv))
			_, err := c.GetFile(t.Context(), b, "a.md", commit)
			wantCode(t, err, tt.code)
			wantCount(t, srv, githubtest.RouteContents, 0)
			if tt.code == "provider_rate_limited" {
				srv.Clock().Advance(time.Minute)
			}
			// A later call mints again. (Right after a stalled mint, a call
			// may still join that mint, still in flight on its own deadline,
			// and share its failure; so allow a few tries.)
			for try := 0; ; try++ {
				_, err := c.GetFile(t.Context(), b, "a.md", commit)
				if err == nil {
					break
				}
				if try == 20 {
					t.Fatalf("next call after a failed mint: %v", err)
				}
				time.Sleep(50 * time.Millisecond)
			}
			if tt.timeout == 0 {
				wantCount(t, srv, githubtest.RouteMint, 2)
				return
			}
			// With the short deadline the stall needs, a good mint can
			// miss it too on a loaded machine, and is tried again: what
			// is pinned is that a failed mint is not kept.
			if n := srv.Count(githubtest.RouteMint); n < 2 {
				t.Errorf("%d mints, want the failed one and at least one more", n)
			}
		})
	}
}

// TestWrongKey: a key the App does not know is refused at mint time.
func TestWrongKey(t *testing.T) {
	t.Parallel()
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	srv, c, b := setup(t, func(c *github.Config) { c.Key = other })
	srv.AddFile("octo", "docs", commit, "a.md", []byte("x"))
	_, err = c.GetFile(t.Context(), b, "a.md", commit)
	wantCode(t, err, "provider_forbidden")
	if n := srv.JWTFailures(); n != 1 {
		t.Errorf("fake rejected %d JWTs, want 1", n)
	}
	_, err = srv.Client(func(c *github.Config) { c.AppID = "999" }).GetFile(t.Context(), b, "a.md", commit)
	wantCode(t, err, "provider_forbidden")
}

// TestOnlyAppCredentialsReachGitHub checks every Authorization header the
// fake saw: JWTs on the mint route, minted tokens elsewhere, nothing else.
// Row AZ-11 (docs/security-tests.md).
func TestOnlyAppCredentialsReachGitHub(t *testing.T) {
	t.Parallel()
	srv, c, b := setup(t)
	srv.AddFile("octo", "docs", commit, "a.md", []byte("x"))
	srv.SetBranch("octo", "docs", "main", commit)
	for range 3 {
		if _, err := c.GetFile(t.Context(), b, "a.md", commit); err != nil {
			t.Fatal(err)
		}
		if _, err := c.ResolveBranch(t.Context(), b, "main"); err != nil {
			t.Fatal(err)
		}
		srv.RevokeTokens()
	}
	for _, r := range srv.Requests() {
		want := githubtest.AuthToken
		if r.Route == githubtest.RouteMint {
			want = githubtest.AuthJWT
		}
		if !r.HasAuthorization || r.Auth != want {
			t.Errorf("%s %s carried %q credentials, want %q", r.Method, r.Path, r.Auth, want)
		}
	}
}

// A link bound to a repository ID reads by name (/repos/{owner}/{repo}), so
// its token must name the linked repository as the link does. Here the ID is
// another repository's than the name's, as after a rename of the linked
// repository and a new one taking over its old name: the mint is refused
// and nothing is read. Before, only the ID was compared, and the read went
// to whatever repository now bore the name.
func TestMintByIDRefusesAnotherName(t *testing.T) {
	t.Parallel()
	srv, c, b := setup(t)
	srv.AddFile("octo", "docs", commit, "a.md", []byte("the newcomer's text"))
	srv.AddFile("octo", "docs-old", commit, "a.md", []byte("the linked repository's text"))
	b.RepositoryID = srv.RepositoryID("octo", "docs-old")
	_, err := c.GetFile(t.Context(), b, "a.md", commit)
	wantCode(t, err, "provider_inconsistent")
	wantCount(t, srv, githubtest.RouteContents, 0)
}
