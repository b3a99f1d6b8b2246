package tools

import (
	"log/slog"
	"time"

	"heyaira/cursor"
	"heyaira/github"
	"heyaira/server/mcp"
	"heyaira/store"
)

// Config is what the tools read of the server's configuration: the clock,
// and the GitHub fairness figures (flights.go, githubpace.go), which
// server.Config documents.
type Config struct {
	Now                  func() time.Time
	GitHubInFlight       int
	GitHubWait           time.Duration
	GitHubProjectShare   int
	GitHubPrincipalShare int
	GitHubHourlyBudget   int
	Replicas             int
}

// New returns every tool of the server and the methods tools serve
// (resources, prompts, completions), for mcp.NewToolTable, and the
// count of GitHub requests in flight, for the metrics.
func New(logger *slog.Logger, cfg Config, st *store.DB, gh *github.Client, cursors *cursor.Codec) (all [][]*mcp.Tool, inFlight func() int) {
	flights := newFlightCap(cfg)
	pages := pager{cursors: cursors, now: cfg.Now}
	docs := &documentTools{logger: logger, st: st, gh: gh, cursors: cursors, flights: flights, pages: pages, now: cfg.Now}
	memory := &memoryTools{st: st, pages: pages}
	tasks := &taskTools{st: st, pages: pages}
	workflows := newWorkflowTools(logger, st, gh, flights)
	return [][]*mcp.Tool{docs.tools(), memory.tools(), tasks.tools(), workflows.tools(), docs.methods(), workflows.methods()},
		flights.inFlight
}
