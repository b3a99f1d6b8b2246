package main

import (
	"log/slog"
	"runtime/debug"
)

// gcPercent is the garbage collector's target for `serve` when the operator
// has not set GOGC: a collection when the heap has grown by 400% of what
// the last one found live, instead of Go's 100%. The server's live heap is
// small (about 1 MiB idle; at most 0.8 MiB per 1 MiB read in flight), while a
// small read makes about 60 KB of short-lived garbage. At 100% the heap goal
// is then Go's minimum, 4 MiB, so the collector ran about every 50 small
// reads and took about a tenth of the server's CPU; at 400% the minimum is
// 16 MiB, about every 250. Measured in the same runs (docs/performance.md, run 11):
// 3–22% less server CPU per small read, median 11%, over 14 pairs of loops;
// peak RSS under 64 concurrent 1 MiB reads 91–133 MiB against 92–125 MiB.
// GOGC and GOMEMLIMIT, which the runtime reads itself, still decide when set.
const gcPercent = 400

// tuneGC applies gcPercent unless GOGC is set, and logs the target in
// effect (-1: collection off), which for an invalid GOGC is the runtime's 100.
func tuneGC(getenv func(string) string, logger *slog.Logger) {
	from := "GOGC"
	if getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
		from = "default"
	}
	effective := debug.SetGCPercent(100) // the only way to read it
	debug.SetGCPercent(effective)
	logger.Info("garbage collector", "gogc", effective, "from", from)
}
