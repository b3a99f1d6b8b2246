package tools_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"heyaira/github/githubtest"
	"heyaira/server"
	"heyaira/server/internal/servertest"
)

// sharedInstallation is two projects whose repositories are on one GitHub
// installation (owner "o"), each with a readable document.
type sharedInstallation struct {
	e          *servertest.Env
	tokA, tokB string
	argsA      map[string]any
	argsB      map[string]any
}

func newSharedInstallation(t *testing.T, mutate ...func(*server.Config)) *sharedInstallation {
	t.Helper()
	e := servertest.New(t, mutate...)
	a, b := e.NewTenant("o", "a"), e.NewTenant("o", "b")
	if a.Installation != b.Installation {
		t.Fatal("o/a and o/b are on different installations")
	}
	e.GH.AddFile("o", "a", servertest.CommitA, "a.md", []byte("project A's document"))
	e.GH.AddFile("o", "b", servertest.CommitA, "b.md", []byte("project B's document"))
	return &sharedInstallation{e: e,
		tokA: e.Token(a, "documents:read"), tokB: e.Token(b, "documents:read"),
		argsA: map[string]any{"source_id": e.AddSource(a, "runtime", "a.md", servertest.CommitA, "", 65536)},
		argsB: map[string]any{"source_id": e.AddSource(b, "runtime", "b.md", servertest.CommitA, "", 65536)},
	}
}

// read reads one document; it fails the test unless it reached GitHub and
// succeeded.
func (s *sharedInstallation) read(t *testing.T, tok string, args map[string]any, what string) {
	t.Helper()
	before := s.e.GH.Count(githubtest.RouteContents)
	if _, isErr, raw := s.e.Call(tok, "git_document_get", args); isErr {
		t.Fatalf("%s: %s", what, raw)
	}
	if n := s.e.GH.Count(githubtest.RouteContents) - before; n != 1 {
		t.Errorf("%s: %d GitHub requests, want 1", what, n)
	}
}

// refused reads one document and fails the test unless it was refused with
// code and retry_after_seconds of wait, and sent nothing to GitHub. It
// returns the error's message.
func (s *sharedInstallation) refused(t *testing.T, tok string, args map[string]any, code string, wait float64, what string) string {
	t.Helper()
	before := s.e.GH.Count(githubtest.RouteContents)
	errObj := s.e.WantCode(tok, "git_document_get", args, code)["error"].(map[string]any)
	if got := errObj["retry_after_seconds"]; got != wait {
		t.Errorf("%s: retry_after_seconds = %v, want %v", what, got, wait)
	}
	if n := s.e.GH.Count(githubtest.RouteContents) - before; n != 0 {
		t.Errorf("%s: %d GitHub requests, want none", what, n)
	}
	msg, _ := errObj["message"].(string)
	return msg
}

// Row BT-23: a secondary rate limit GitHub answers to project A's read
// holds A, not the installation. A's next reads are provider_rate_limited
// with retry_after_seconds and send nothing to GitHub until its Retry-After
// is over; project B, on the same installation, waits only the 5 s
// cool-down and then reads. A primary limit is the installation's hourly
// budget and still holds B. Before the change B was refused, with no
// request, for A's whole wait.
func TestBT23GitHubSecondaryLimitHoldsItsProject(t *testing.T) {
	t.Parallel()
	t.Run("secondary", func(t *testing.T) {
		t.Parallel()
		s := newSharedInstallation(t)
		clk := s.e.GH.Clock()
		s.e.GH.InjectN(githubtest.RouteContents, 1, githubtest.RateLimitSecondary(60))
		before := s.e.GH.Count(githubtest.RouteContents)
		sc := s.e.WantCode(s.tokA, "git_document_get", s.argsA, "provider_rate_limited")
		if got := sc["error"].(map[string]any)["retry_after_seconds"]; got != 60.0 || s.e.GH.Count(githubtest.RouteContents) != before+1 {
			t.Errorf("A's limited read: retry_after_seconds %v, want 60 from the one answer", got)
		}
		s.refused(t, s.tokB, s.argsB, "provider_rate_limited", 5, "B during the cool-down")
		clk.Advance(5 * time.Second)
		s.read(t, s.tokB, s.argsB, "B after the cool-down")
		s.refused(t, s.tokA, s.argsA, "provider_rate_limited", 55, "A in its back-off")
		clk.Advance(54 * time.Second)
		s.refused(t, s.tokA, s.argsA, "provider_rate_limited", 1, "A a second before the end")
		clk.Advance(time.Second)
		s.read(t, s.tokA, s.argsA, "A after its back-off")
	})
	t.Run("primary", func(t *testing.T) {
		t.Parallel()
		s := newSharedInstallation(t)
		clk := s.e.GH.Clock()
		s.e.GH.InjectN(githubtest.RouteContents, 1, githubtest.RateLimitPrimary(clk.Now().Add(60*time.Second)))
		s.e.WantCode(s.tokA, "git_document_get", s.argsA, "provider_rate_limited")
		clk.Advance(5 * time.Second)
		s.refused(t, s.tokB, s.argsB, "provider_rate_limited", 55, "B while the installation's hour is spent")
		clk.Advance(55 * time.Second)
		s.read(t, s.tokB, s.argsB, "B after the reset")
		s.read(t, s.tokA, s.argsA, "A after the reset")
	})
}

// Row BT-24: a project's pace. A project may burst 300 GitHub requests;
// with HEYAIRA_REPLICAS=20 a replica holds 15 of them and refills at 50 an
// hour. The 16th read is rate_limited with retry_after_seconds until a
// token is back (72 s) and never reaches GitHub; project B on the same
// installation reads meanwhile; after the wait A reads again.
func TestBT24GitHubPacePerMinute(t *testing.T) {
	t.Parallel()
	clk := servertest.NewManualClock(time.Date(2026, 1, 1, 10, 0, 30, 0, time.UTC))
	s := newSharedInstallation(t, func(c *server.Config) { c.Now, c.Replicas, c.ToolRate, c.ToolBurst = clk.Now, 20, 1e6, 1e6 })
	for i := range 15 {
		s.read(t, s.tokA, s.argsA, fmt.Sprintf("A's read %d within its burst", i+1))
	}
	msg := s.refused(t, s.tokA, s.argsA, "rate_limited", 72, "A's 16th read")
	if !strings.Contains(msg, "GitHub request budget") {
		t.Errorf("the refusal says %q, want the budget named", msg)
	}
	s.read(t, s.tokB, s.argsB, "B while A is over its pace")
	clk.Add(72 * time.Second)
	s.read(t, s.tokA, s.argsA, "A after the wait")
}
