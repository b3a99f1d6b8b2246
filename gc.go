package main

import (
	"log/slog"
	"runtime/debug"
)

// gcPercent is the garbage collector's target for `serve` when the operator
// has not set GOGC: a collection when the heap has grown by 400% of what
// the last one found live, instead of Go's 100%. The server's live heap is
// small (about 1 MiB idle; at most 0.8 MiB per 1 MiB read in flight), while a
// small read makes about 60 KB of short-lived garbage, so at 100% the
// collector ran every few hundred reads and took about a tenth of the
// server's CPU. Measured in the same runs (docs/performance.md, run 11):
// 3–22% less server CPU per small read, median 11%, over 14 pairs of loops;
// peak RSS under 64 concurrent 1 MiB reads 91–133 MiB against 92–125 MiB.
// GOGC and GOMEMLIMIT, which the runtime reads itself, still decide when set.
const gcPercent = 400

// tuneGC applies gcPercent unless GOGC is set, and says which target holds.
func tuneGC(getenv func(string) string, logger *slog.Logger) {
	if v := getenv("GOGC"); v != "" {
		logger.Info("garbage collector", "gogc", v, "from", "GOGC")
		return
	}
	debug.SetGCPercent(gcPercent)
	logger.Info("garbage collector", "gogc", gcPercent, "from", "default")
}
