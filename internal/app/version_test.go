package app

import (
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"testing"
)

// TestVersionOf: the version set with -ldflags wins; then the module
// version Go stamped; then the VCS revision; else "dev".
func TestVersionOf(t *testing.T) {
	t.Parallel()
	rev := []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"}}
	dirty := append(rev, debug.BuildSetting{Key: "vcs.modified", Value: "true"})
	tests := []struct {
		name, set string
		bi        *debug.BuildInfo
		want      string
	}{
		{"no build info", "dev", nil, "dev"},
		{"set at build time", "v1.4.0", &debug.BuildInfo{Main: debug.Module{Version: "v9.9.9"}, Settings: rev}, "v1.4.0"},
		{"module version", "dev", &debug.BuildInfo{Main: debug.Module{Version: "v1.4.1"}, Settings: rev}, "v1.4.1"},
		{"revision", "dev", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: rev}, "dev-0123456789ab"},
		{"modified revision", "dev", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: dirty}, "dev-0123456789ab-dirty"},
		{"nothing stamped", "dev", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "dev"},
	}
	for _, tt := range tests {
		if got := versionOf(tt.set, tt.bi); got != tt.want {
			t.Errorf("%s: versionOf = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestVersionBuild is docs/operating.md's build command: the binary it
// makes prints the version it was given.
func TestVersionBuild(t *testing.T) {
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "heyaira")
	build := exec.Command("go", "build", "-ldflags", "-X heyaira/internal/app.version=v1.2.3-test", "-o", bin, ".")
	build.Dir = "../.." // the module's root, where main.go is
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil || string(out) != "heyaira v1.2.3-test\n" {
		t.Errorf("heyaira version = %q, %v; want %q", out, err, "heyaira v1.2.3-test\n")
	}
}
