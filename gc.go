package main

import (
	"log/slog"
	"runtime/debug"
)

// gcPercent is the garbage collector's target for `serve` when the operator
// has not set GOGC: a collection when the heap has grown by 400% of what
// the last one found live, instead of Go's 100%. The server's live heap is
// small (about 1 MiB idle; 0.2–0.7 MiB per 1 MiB read in flight), while a
// small read allocates about 60 KB of short-lived garbage, so at 100% the
// collector ran every few hundred reads and took about 12% of the server's
// CPU. At 400% the server spends 8–13% less CPU per small read (0.32 →
// 0.25–0.29 ms) and peak RSS under 64 concurrent 1 MiB reads stayed about
// the same (docs/performance.md, run 11). GOGC and GOMEMLIMIT, which the runtime
// reads itself, still decide when set.
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
