package tools

import (
	"time"

	"heyaira/server/internal/web"
	"heyaira/server/mcp"
)

// githubPace paces each project's GitHub requests with one token bucket.
// It refills at the project's hourly budget, by default
// Config.GitHubHourlyBudget (1000), or what an administrator set for the
// project (heyaira-admin set-project-limits), which arrives with the bearer
// check (store.Auth.GitHubRequestsHourly). It holds at most the minute's
// share: githubPaceFloor (300, a third of GitHub's secondary limit of about
// 900 requests a minute per installation), or a fifteenth of a budget over
// 4,500, and never more than the hourly budget itself.
//
// So a project can spend its share at once and then its budget's rate,
// never two minutes' worth across any boundary: its burst, not its hourly
// total, is what trips GitHub's secondary limits, which answer every
// project on the installation. In any hour it makes at most its budget plus
// one burst. A request over it is rate_limited, with retry_after_seconds
// until a token is back, and never reaches GitHub. What counts is every
// file and branch request made for the project (documents and dispatch
// sources); installation-token mints are the App's own requests, outside
// the installation's limit, and are not counted.
//
// The buckets live in this process, so each of Config.Replicas replicas
// refills at 1/N of the rate and holds 1/N of the burst (rounded up), as
// the other per-process limits do (docs/deploy.md).
type githubPace struct {
	def, replicas int
	buckets       *web.RateLimiter // by project
}

const (
	githubPaceFloor = 300
	githubPaceShare = 15
)

func newGitHubPace(def, replicas int) *githubPace {
	return &githubPace{def: def, replicas: max(replicas, 1), buckets: web.NewRateLimiter(0, 0)}
}

// take counts one request of project, whose administrator's hourly limit is
// limit (0 means the default).
func (p *githubPace) take(project string, limit int, now time.Time) error {
	hourly := p.def
	if limit > 0 {
		hourly = limit
	}
	burst := min(hourly, max(githubPaceFloor, (hourly+githubPaceShare-1)/githubPaceShare))
	rate := float64(hourly) / float64(p.replicas) / time.Hour.Seconds()
	if wait, ok := p.buckets.Take(project, rate, float64((burst+p.replicas-1)/p.replicas), now); !ok {
		return mcp.RetryAfter("the project's GitHub request budget is spent for now; retry after the wait", wait)
	}
	return nil
}
