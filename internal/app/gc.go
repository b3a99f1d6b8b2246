package app

import (
	"log/slog"
	"runtime/debug"
)

// gcPercent is serve's garbage collector target when GOGC is unset, where
// Go's default is 100%: the live heap is small and a read's garbage
// short-lived, so collecting less often saves CPU, and a larger target costs
// memory (docs/design.md, Decisions: the collector's target). GOGC and
// GOMEMLIMIT, which the runtime reads itself, still decide when set.
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
