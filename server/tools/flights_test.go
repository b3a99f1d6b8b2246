package tools

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"heyaira/server/mcp"
)

// Row BT-21: the in-flight shares themselves. A principal holds at most
// GitHubPrincipalShare slots and a project at most GitHubProjectShare; a
// request over its share waits GitHubWait and is rate_limited with
// retry_after_seconds, while other principals and projects still get
// slots; a slot freed during the wait goes to the waiting request; released
// shares leave nothing behind. The waits run in a testing/synctest bubble:
// its clock moves only when every goroutine in it is blocked, so the
// production wait (2 s) is measured exactly and costs no real time.
func TestBT21InFlightShares(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := newFlightCap(Config{Now: time.Now, GitHubInFlight: 64, GitHubWait: 2 * time.Second,
			GitHubProjectShare: 16, GitHubPrincipalShare: 8, GitHubHourlyBudget: 1000, Replicas: 1})
		as := func(project, who string) mcp.Principal {
			p := mcp.Principal{}
			p.Auth.Kind, p.Auth.ProjectID, p.Auth.PrincipalID = "oauth", project, who
			return p
		}
		var releases []func()
		take := func(p mcp.Principal, n int) {
			t.Helper()
			for i := range n {
				r, err := f.acquire(context.Background(), p)
				if err != nil {
					t.Fatalf("slot %d: %v", i, err)
				}
				releases = append(releases, r)
			}
		}
		refused := func(p mcp.Principal, what string) {
			t.Helper()
			start := time.Now()
			_, err := f.acquire(context.Background(), p)
			var fe *mcp.FieldsError
			if !errors.As(err, &fe) || fe.Code() != "rate_limited" || fe.Fields()["retry_after_seconds"] != 1 {
				t.Errorf("%s: %v, want rate_limited with retry_after_seconds", what, err)
			}
			if waited := time.Since(start); waited != f.wait {
				t.Errorf("%s: refused after %v, want after GitHubWait (%v)", what, waited, f.wait)
			}
		}
		take(as("p1", "u1"), 8)
		refused(as("p1", "u1"), "a principal's ninth request")
		take(as("p1", "u2"), 8)
		refused(as("p1", "u3"), "a project's seventeenth request")
		take(as("p2", "u4"), 8)

		// A slot freed 1 s into the wait goes to the waiting request then.
		go func() {
			time.Sleep(time.Second)
			releases[0]()
		}()
		start := time.Now()
		r, err := f.acquire(context.Background(), as("p1", "u1"))
		if err != nil || time.Since(start) != time.Second {
			t.Errorf("a wait for a slot freed after 1 s: %v after %v", err, time.Since(start))
		}
		releases[0] = r

		for _, r := range releases {
			r()
		}
		if f.inFlight() != 0 {
			t.Errorf("after release: %d in flight", f.inFlight())
		}
		take(as("p1", "u1"), 8) // the shares are free again

		// A request that ends while it waits is provider_unavailable, as an
		// end during the GitHub call is, never internal.
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			time.Sleep(100 * time.Millisecond)
			cancel()
		}()
		if _, err := f.acquire(ctx, as("p1", "u1")); err == nil {
			t.Error("a ninth request got a slot")
		} else if code, _ := mcp.Classify(err); code != "provider_unavailable" {
			t.Errorf("a wait ended by its request: %s (%v), want provider_unavailable", code, err)
		}
	})
}

// Row BT-22, with replicas: each of N replicas holds 1/N of a project's
// burst (rounded up) and refills at 1/N of its rate, so that N replicas
// together stay within one pace.
func TestBT22HourlyBudgetSharedByReplicas(t *testing.T) {
	b := newGitHubPace(1000, 2)
	now := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	spend := func(project string, limit int) (n int) {
		for n = 0; b.take(project, limit, now) == nil; n++ {
			if n > 1000 {
				t.Fatal("no budget stops the spending")
			}
		}
		return n
	}
	if n := spend("p", 0); n != 150 {
		t.Errorf("default budget on one of two replicas: a burst of %d requests, want 150", n)
	}
	now = now.Add(time.Hour)
	if n := spend("p", 0); n != 150 {
		t.Errorf("an hour later: %d requests, want the burst of 150 again (500 refilled, capped)", n)
	}
	now = now.Add(time.Minute)
	if n := spend("p", 0); n != 8 {
		t.Errorf("a minute later: %d requests, want 8 (500 an hour)", n)
	}
	if n := spend("q", 3); n != 2 {
		t.Errorf("budget 3 on one of two replicas: %d requests, want 2 (rounded up)", n)
	}
}

// Row BT-24 (F4 residue): one bucket, so no boundary doubles the pace.
// With an hourly budget of 6000 the burst is 400 (a fifteenth) and the rate
// 100 a minute. 400 requests at 10:00:59 spend the burst; a second later,
// across the clock minute, one more is allowed, not another 400; a minute
// later 100. Before, the minute's window and the hour's were fixed clock
// windows, and a project could send 800 within two seconds.
func TestBT24NoBoundaryDoublesThePace(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 10, 0, 59, 0, time.UTC)
	f := newFlightCap(Config{Now: func() time.Time { return now }, GitHubInFlight: 64, GitHubWait: 2 * time.Second,
		GitHubProjectShare: 16, GitHubPrincipalShare: 8, GitHubHourlyBudget: 6000, Replicas: 1})
	p := mcp.Principal{}
	p.Auth.Kind, p.Auth.ProjectID, p.Auth.PrincipalID = "oauth", "p", "u"
	spend := func(n int) (ok int) {
		for range n {
			release, err := f.acquire(context.Background(), p)
			if err != nil {
				var fe *mcp.FieldsError
				if !errors.As(err, &fe) || fe.Code() != "rate_limited" {
					t.Fatalf("refusal %v, want rate_limited", err)
				}
				continue
			}
			release()
			ok++
		}
		return ok
	}
	for _, step := range []struct {
		advance time.Duration
		want    int
	}{{0, 400}, {time.Second, 1}, {time.Minute, 100}} {
		now = now.Add(step.advance)
		if ok := spend(500); ok != step.want {
			t.Errorf("at %s: %d of 500 allowed, want %d", now.Format(time.TimeOnly), ok, step.want)
		}
	}
}
