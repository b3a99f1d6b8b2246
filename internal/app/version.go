package app

import "runtime/debug"

// version is set at build time with -ldflags "-X heyaira/internal/app.version=…"
// (docs/operating.md, "Build").
var version = "dev"

// buildVersion is what `heyaira version` prints, serve logs and /readyz
// reports: the version set at build time; else the module version Go
// stamped into the binary (`go install heyaira@v1.2.3`, or the pseudo-version
// of the commit that `go build` in a git checkout records); else the VCS
// revision; else "dev".
func buildVersion() string {
	bi, _ := debug.ReadBuildInfo()
	return versionOf(version, bi)
}

func versionOf(set string, bi *debug.BuildInfo) string {
	if set != "dev" || bi == nil {
		return set
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	rev, dirty := "", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return set
	}
	v := "dev-" + rev[:min(len(rev), 12)]
	if dirty {
		v += "-dirty"
	}
	return v
}
