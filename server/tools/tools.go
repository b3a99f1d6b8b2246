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

// New returns every tool of the server, for mcp.NewToolTable, and the
// count of GitHub requests in flight, for the metrics.
func New(logger *slog.Logger, cfg Config, st *store.DB, gh *github.Client, cursors *cursor.Codec) (all [][]*mcp.Tool, inFlight func() int) {
	flights := newFlightCap(cfg)
	docs := &documentTools{logger: logger, st: st, gh: gh, cursors: cursors, flights: flights, now: cfg.Now}
	pages := pager{cursors: cursors, now: cfg.Now}
	memory := &memoryTools{st: st, pages: pages}
	tasks := &taskTools{st: st, pages: pages}
	return [][]*mcp.Tool{docs.tools(), memory.tools(), tasks.tools(), newWorkflowTools(logger, st, gh, flights).tools()},
		flights.inFlight
}
