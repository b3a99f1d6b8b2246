package app

import (
	"log/slog"
	"runtime/debug"
)

// gcPercent is the garbage collector's target for `serve` when the operator
// has not set GOGC: a collection when the heap has grown by 200% of what
// the last one found live, instead of Go's 100%. The server's live heap is
// small (about 1 MiB idle; at most 0.8 MiB per 1 MiB read in flight), while a
// small read makes about 60 KB of short-lived garbage. At 100% the heap goal
// is then Go's minimum, 4 MiB, so the collector ran about every 50 small
// reads and took about a tenth of the server's CPU (docs/performance.md, run
// 11: 400% saved 3–22% of the server's CPU per small read, median 11%). At
// 200% the minimum is 8 MiB. 400% (16 MiB) was the default until issue 28,
// which asked for a peak RSS of at most 35 MiB: in one run of the latency
// and single phases (small reads up to 32 at a time, 1 MiB reads at 45/s)
// the server's peak RSS was 43.8 MiB at 400%, 32.2 MiB at 200% and 26.8 MiB
// at 100%, with server CPU per small read within that run's noise (0.85–0.94
// ms at one at a time, 0.39–0.49 ms at 32). By the collections' spacing,
// 200% costs about 3% of the server's CPU more than 400% and saves a quarter
// of its memory. GOGC and GOMEMLIMIT, which the runtime reads itself, still
// decide when set.
const gcPercent = 200

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
