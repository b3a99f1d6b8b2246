package app

import (
	"bytes"
	"strings"
	"testing"
)

// TestRunUsage pins the one exit-status rule (exitCode): help that was asked
// for is 0 with the help on stdout, in both programs and for every command;
// a usage error is 2 with the reason on stderr.
func TestRunUsage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantOut  string // a part of stdout
	}{
		{"no command", []string{"heyaira"}, 2, ""},
		{"unknown command", []string{"heyaira", "frobnicate"}, 2, ""},
		{"serve with arguments", []string{"heyaira", "serve", "--port", "1"}, 2, ""},
		{"version", []string{"heyaira", "version"}, 0, "heyaira dev\n"},
		{"admin without command", []string{"heyaira", "admin"}, 2, ""},
		{"heyaira-admin without command", []string{"/usr/bin/heyaira-admin"}, 2, ""},
		{"--help", []string{"heyaira", "--help"}, 0, "usage:"},
		{"help", []string{"heyaira", "help"}, 0, "usage:"},
		{"admin --help", []string{"heyaira", "admin", "--help"}, 0, "migrate"},
		{"heyaira-admin help", []string{"heyaira-admin", "help"}, 0, "migrate"},
		{"heyaira-admin help of a command", []string{"heyaira-admin", "help", "audit"}, 0, "usage: heyaira-admin audit"},
		{"heyaira-admin command --help", []string{"heyaira-admin", "audit", "--help"}, 0, "usage: heyaira-admin audit"},
		{"heyaira-admin command -h", []string{"heyaira-admin", "audit", "-h"}, 0, "usage: heyaira-admin audit"},
		{"heyaira-admin unknown flag", []string{"heyaira-admin", "audit", "--frobnicate"}, 2, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			err := Run(t.Context(), tt.args, func(string) string { return "" }, nil, &stdout, &stderr, "")
			if got := ExitCode(err); got != tt.wantCode {
				t.Fatalf("run(%q) = %v: exit %d, want %d", tt.args, err, got, tt.wantCode)
			}
			if !strings.Contains(stdout.String(), tt.wantOut) {
				t.Errorf("stdout = %q, want it to contain %q", stdout.String(), tt.wantOut)
			}
			if tt.wantCode == 2 && stderr.Len() == 0 {
				t.Errorf("usage error with nothing on stderr")
			}
		})
	}
}

// The admin CLI's lines on stderr start with the name it was
// invoked as, as main's own failure line does: "heyaira:" for `heyaira
// admin`, "heyaira-admin:" for the link.
func TestAdminMessagesNameTheProgram(t *testing.T) {
	t.Parallel()
	for argv0, want := range map[string]string{"heyaira": "heyaira: ", "/usr/local/bin/heyaira-admin": "heyaira-admin: "} {
		for _, args := range [][]string{{"list-principals"}, {"frobnicate"}} {
			argv := []string{argv0}
			if argv0 == "heyaira" {
				argv = append(argv, "admin")
			}
			var stderr bytes.Buffer
			err := Run(t.Context(), append(argv, args...), func(string) string { return "" }, nil, &bytes.Buffer{}, &stderr, "")
			if ExitCode(err) != 2 || !strings.HasPrefix(stderr.String(), want+args[0]) && !strings.HasPrefix(stderr.String(), want+"unknown command") {
				t.Errorf("%v: exit %d, stderr %q, want 2 and a line starting %q", argv, ExitCode(err), stderr.String(), want)
			}
		}
	}
}
