package app

import (
	"log/slog"
	"runtime/debug"
)

// gcPercent is the garbage collector's target for `serve` when the operator
// has not set GOGC: 200%, where Go's default is 100%. The live heap is small
// and a small read's garbage short-lived, so at 100% the heap goal is Go's
// 4 MiB minimum and the collector takes about a tenth of the server's CPU; a
// larger target saves that CPU and costs memory: at 400% the server's peak
// RSS passed 35 MiB, at 200% it stays under (figures: the README's judgement
// call on the collector's target; docs/performance.md, runs 11 and 28).
// GOGC and GOMEMLIMIT, which the runtime reads itself, still decide when set.
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
