package tools

import (
	"context"
	"errors"
	"fmt"
	"time"

	"heyaira/github"
	"heyaira/server/internal/web"
	"heyaira/server/mcp"
)

// GitHub requests in flight. GitHub allows about 100 concurrent requests per
// installation; the server keeps to Config.GitHubInFlight (64) in all. So
// that one tenant cannot take them all, a project may hold at most
// GitHubProjectShare of them (default a quarter, 16) and a principal at most
// GitHubPrincipalShare (default an eighth, 8). A request takes its
// principal's slot, then its project's, then one of the server's: narrowest
// first, so a request waiting on its own share holds nothing anyone else
// needs. It waits at most GitHubWait for all three; then it is rate_limited.
// Before any slot, it is counted against the project's pace (githubpace.go).
type flightCap struct {
	all          chan struct{}
	wait         time.Duration
	perProject   int
	perPrincipal int
	pace         *githubPace
	now          func() time.Time
	shares       web.KeyedSlots // by "project:<id>" and "principal:<subject>"
}

func newFlightCap(cfg Config) *flightCap {
	return &flightCap{
		all: make(chan struct{}, cfg.GitHubInFlight), wait: cfg.GitHubWait,
		perProject: cfg.GitHubProjectShare, perPrincipal: cfg.GitHubPrincipalShare,
		pace: newGitHubPace(cfg.GitHubHourlyBudget, cfg.Replicas), now: cfg.Now,
	}
}

var errInFlight = mcp.RetryAfter("too many GitHub requests in flight; retry shortly", time.Second)

// acquire counts one GitHub request of caller p against its project's
// pace and takes its slots. The returned release must be called
// once the request is done.
func (f *flightCap) acquire(ctx context.Context, p mcp.Principal) (release func(), err error) {
	now := f.now()
	if err := f.pace.take(p.Auth.ProjectID, p.Auth.GitHubRequestsHourly, now); err != nil {
		return nil, err
	}
	keys := []string{"principal:" + p.Subject(), "project:" + p.Auth.ProjectID}
	shares := []*web.Share{f.shares.Join(keys[0], f.perPrincipal), f.shares.Join(keys[1], f.perProject)}
	chans := []chan struct{}{shares[0].Slots, shares[1].Slots, f.all}
	held := 0
	release = func() {
		for _, c := range chans[:held] {
			<-c
		}
		for i, s := range shares {
			f.shares.Leave(keys[i], s)
		}
	}
	timer := time.NewTimer(f.wait)
	defer timer.Stop()
	for _, c := range chans {
		if err := web.Take(ctx, c, timer.C); err != nil {
			release()
			if errors.Is(err, web.ErrExpired) {
				err = errInFlight
			}
			if ctx.Err() != nil {
				// The request ended while it waited (the client left, or the
				// server is stopping): what the same end during the GitHub
				// call is, not an internal error.
				err = fmt.Errorf("%w: canceled while waiting for a GitHub slot", github.ErrUnavailable)
			}
			return nil, err
		}
		held++
	}
	return release, nil
}

// inFlight reports how many of the server's slots are taken (for metrics).
func (f *flightCap) inFlight() int { return len(f.all) }
