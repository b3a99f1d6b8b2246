package server

import "time"

// A project's pace: the GitHub requests it may make per clock minute (UTC),
// githubPaceFloor (300, a third of GitHub's secondary limit of about 900
// requests a minute per installation), or a fifteenth of its hourly budget
// when an administrator set one over 4,500. Without it a project could spend
// its whole hour in seconds, and that burst, not its hourly total, is what
// trips GitHub's secondary rate limits, which then answer every project on
// the installation. At its pace one project alone stays within a third of
// them (two thirds across a minute boundary, since the windows are fixed);
// the in-flight shares (flights.go) keep it under GitHub's 100 concurrent
// requests. Below the floor the hourly budget is the tighter limit.
const (
	githubPaceFloor = 300
	githubPaceShare = 15
)

// githubPace counts each project's requests in the current minute. As with
// the hourly budget, each of Config.Replicas replicas allows 1/N of the
// pace (rounded up).
type githubPace struct {
	budget *githubBudget // the hourly budget the pace derives from
	minute *clockWindow  // by project
}

func newGitHubPace(budget *githubBudget) *githubPace {
	return &githubPace{budget: budget, minute: newClockWindow(time.Minute)}
}

// perMinute is the pace, for the whole deployment, of a project whose
// administrator's hourly limit is limit (0 means the default).
func (p *githubPace) perMinute(limit int) int {
	return max(githubPaceFloor, (p.budget.hourly(limit)+githubPaceShare-1)/githubPaceShare)
}

// take counts one request of project against its pace.
func (p *githubPace) take(project string, limit int, now time.Time) error {
	return p.minute.take(project, p.perMinute(limit), p.budget.replicas, now,
		"the project's GitHub requests for this minute are spent; retry after the minute")
}
