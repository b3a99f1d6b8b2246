package github_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"net/url"
	"strings"
	"testing"
	"time"

	"heyaira/github"
	"heyaira/github/githubtest"
	"heyaira/internal/logbuf"
)

// TestNoSecretsInLogsOrErrors runs successes, a token revocation, a rate
// limit and faults whose bodies hold canaries, with a debug-level capturing
// logger, and checks that no token, JWT, key, Authorization header, response
// body, document content or download URL appears in the log or in any
// returned error, in raw, base64, JSON-escaped or URL-escaped form, nor any
// 12-character piece of a token or JWT signature.
// Rows LG-01, PF-06 (docs/security-tests.md).
func TestNoSecretsInLogsOrErrors(t *testing.T) {
	t.Parallel()
	var logBuf logbuf.Buffer
	logger := slog.New(slog.NewJSONHandler(&logBuf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	// The client's own timeout stays at the fake's 10 s: a loaded machine
	// may take longer than a short one to sign and mint. Only the stalled
	// read below has a short deadline, its caller's.
	srv, c, b := setup(t, func(c *github.Config) { c.Logger = logger })

	content := "CANARYCONTENT-7f3a9e1c-" + strings.Repeat("body text ", 20)
	bodies := []string{"CANARYERRORBODY-51d2", "CANARYFORBIDDEN-88aa", "CANARYMALFORMED-0b0b", "CANARYRATELIMIT-c3c3"}
	srv.AddFile("octo", "docs", commit, "a.md", []byte(content))
	srv.SetBranch("octo", "docs", "main", commit)

	var errs []string
	callWithin := func(d time.Duration, f githubtest.Fault, route githubtest.Route) {
		if f != nil {
			srv.InjectN(route, 1, f)
		}
		ctx, cancel := context.WithTimeout(t.Context(), d)
		defer cancel()
		if _, err := c.GetFile(ctx, b, "a.md", commit); err != nil {
			errs = append(errs, err.Error())
		}
	}
	call := func(f githubtest.Fault, route githubtest.Route) { callWithin(time.Minute, f, route) }
	call(nil, "")
	srv.RevokeTokens() // 401 on the cached token, mint, retry
	call(nil, "")
	if _, err := c.ResolveBranch(t.Context(), b, "main"); err != nil {
		t.Fatal(err)
	}
	call(githubtest.Status(500, `{"message":"`+bodies[0]+`"}`), githubtest.RouteContents)
	call(githubtest.Status(403, `{"message":"`+bodies[1]+`"}`), githubtest.RouteContents)
	call(githubtest.Status(200, `{"type":"file","path":"`+bodies[2]), githubtest.RouteContents)
	srv.RevokeTokens()
	call(githubtest.Status(401, `{"message":"`+bodies[0]+`"}`), githubtest.RouteMint)
	call(githubtest.Status(500, `{"message":"`+bodies[0]+`"}`), githubtest.RouteMint)
	callWithin(time.Second, githubtest.Stall(), githubtest.RouteContents)
	call(githubtest.Status(403, `{"message":"You have exceeded a secondary rate limit `+bodies[3]+`"}`), githubtest.RouteContents)
	srv.Clock().Advance(2 * time.Minute)
	obj := srv.FileObject("octo", "docs", commit, "b.md", []byte(content+"\x00"))
	srv.AddObject("octo", "docs", commit, "b.md", obj)
	if _, err := c.GetFile(t.Context(), b, "b.md", commit); err != nil {
		errs = append(errs, err.Error())
	}

	logText := logBuf.String()
	for _, want := range []string{"github token minted", "github request", "github token refused"} {
		if !strings.Contains(logText, want) {
			t.Fatalf("log lacks %q; the test would prove nothing:\n%s", want, logText)
		}
	}
	if len(errs) < 8 {
		t.Fatalf("only %d errors collected", len(errs))
	}
	haystack := logText + "\n" + strings.Join(errs, "\n")

	secrets := append([]string{content, srv.DownloadURLToken()}, bodies...)
	secrets = append(secrets, srv.IssuedTokens()...)
	secrets = append(secrets, srv.SeenJWTs()...)
	for _, line := range strings.Split(string(githubtest.KeyPEM()), "\n") {
		if len(line) >= 40 && !strings.HasPrefix(line, "-----") {
			secrets = append(secrets, line)
		}
	}
	// The base64 lines GitHub sends for the content.
	for _, line := range strings.Split(obj["content"].(string), "\n") {
		if len(line) >= 20 {
			secrets = append(secrets, line)
		}
	}
	if len(srv.IssuedTokens()) < 3 || len(srv.SeenJWTs()) < 3 {
		t.Fatalf("too few tokens (%d) or JWTs (%d) to check", len(srv.IssuedTokens()), len(srv.SeenJWTs()))
	}
	for _, s := range secrets {
		for _, form := range encodings(s) {
			if strings.Contains(haystack, form) {
				t.Errorf("secret %.24q... appears (as %.24q...)", s, form)
			}
		}
	}
	// No 12-character piece of a token or of a JWT signature either.
	pieces := srv.IssuedTokens()
	for _, j := range srv.SeenJWTs() {
		pieces = append(pieces, j[strings.LastIndex(j, ".")+1:])
	}
	for _, s := range pieces {
		s = strings.TrimPrefix(s, "ghs_")
		for i := 0; i+12 <= len(s); i++ {
			if strings.Contains(haystack, s[i:i+12]) {
				t.Errorf("a 12-character piece of a credential appears: %q", s[i:i+12])
				break
			}
		}
	}
	for _, banned := range []string{"Bearer", "Authorization", "eyJ", "download_url", "raw.githubusercontent.com"} {
		if strings.Contains(haystack, banned) {
			t.Errorf("%q appears in the log or an error", banned)
		}
	}
}

// encodings returns s as it might leak: raw, base64, JSON-escaped and
// URL-escaped.
func encodings(s string) []string {
	j, _ := json.Marshal(s)
	return []string{
		s,
		base64.StdEncoding.EncodeToString([]byte(s)),
		base64.RawURLEncoding.EncodeToString([]byte(s)),
		string(j[1 : len(j)-1]),
		url.QueryEscape(s),
		url.PathEscape(s),
	}
}
