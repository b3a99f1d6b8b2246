package server

import "time"

// githubBudget is each project's GitHub request budget per clock hour (UTC):
// by default Config.GitHubHourlyBudget (1000), or what an administrator set
// for the project (heyaira-admin set-project-limits), which arrives with the
// bearer check (store.Auth.GitHubRequestsHourly). A request over it is
// rate_limited, with retry_after_seconds until the next hour, and never
// reaches GitHub. An installation's own limit is 5000 requests an hour, so
// five projects at full budget fit on one installation, and no project can
// run its installation into GitHub's limit for everyone else on it. What
// counts is every file and branch request made for the project (documents
// and dispatch sources); installation-token mints are the App's own
// requests, outside the installation's limit, and are not counted.
//
// The counts live in this process, so each of Config.Replicas replicas
// spends 1/N of every budget (rounded up), as the other per-process limits
// do: the deployment spends at most one budget an hour (plus N − 1 for the
// rounding), and with sticky routing a project may get as little as 1/N of
// it (docs/deploy.md). An exact shared count would be one row per project
// and hour in PostgreSQL, updated with INSERT … ON CONFLICT … WHERE requests
// < limit before each request: one more statement on every GitHub read.
type githubBudget struct {
	def      int
	replicas int
	hour     *clockWindow // by project
}

func newGitHubBudget(def, replicas int) *githubBudget {
	return &githubBudget{def: def, replicas: max(replicas, 1), hour: newClockWindow(time.Hour)}
}

// hourly is a project's budget for the whole deployment, given its
// administrator's limit (0 means the default).
func (b *githubBudget) hourly(limit int) int {
	if limit <= 0 {
		return b.def
	}
	return limit
}

// spend counts one request of project against limit (0 means the default).
func (b *githubBudget) spend(project string, limit int, now time.Time) error {
	return b.hour.take(project, b.hourly(limit), b.replicas, now,
		"the project's hourly GitHub request budget is spent; retry after the hour")
}
