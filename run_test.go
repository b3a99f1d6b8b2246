package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"

	"heyaira/cursor"
	"heyaira/internal/logbuf"
	"heyaira/store/storetest"
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
			err := run(t.Context(), tt.args, func(string) string { return "" }, nil, &stdout, &stderr)
			if got := exitCode(err); got != tt.wantCode {
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

// Issue 31: the admin CLI's lines on stderr start with the name it was
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
			err := run(t.Context(), append(argv, args...), func(string) string { return "" }, nil, &bytes.Buffer{}, &stderr)
			if exitCode(err) != 2 || !strings.HasPrefix(stderr.String(), want+args[0]) && !strings.HasPrefix(stderr.String(), want+"unknown command") {
				t.Errorf("%v: exit %d, stderr %q, want 2 and a line starting %q", argv, exitCode(err), stderr.String(), want)
			}
		}
	}
}

func TestServeRefusesMissingSchema(t *testing.T) {
	t.Parallel()
	env := baseEnv(t, storetest.NewURL(t))
	err := run(t.Context(), []string{"heyaira", "serve"}, env.get, nil, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "heyaira-admin migrate") {
		t.Fatalf("serve on an empty database = %v, want a message naming heyaira-admin migrate", err)
	}
}

func TestServeRefusesUnprotectedCursorKey(t *testing.T) {
	t.Parallel()
	env := baseEnv(t, storetest.NewMigratedURL(t))
	env["HEYAIRA_CURSOR_KEY_FILE"] = writeFile(t, "cursor.key", hexKey(), 0o644)
	err := run(t.Context(), []string{"heyaira", "serve"}, env.get, nil, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "group or others") {
		t.Fatalf("serve with a 0644 key file = %v, want a refusal", err)
	}
}

func TestServeRefusesMissingConfig(t *testing.T) {
	t.Parallel()
	for _, missing := range []string{"HEYAIRA_DATABASE_URL", "HEYAIRA_CURSOR_KEY_FILE"} {
		env := baseEnv(t, "postgres://unused")
		delete(env, missing)
		err := run(t.Context(), []string{"heyaira", "serve"}, env.get, nil, &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), missing) {
			t.Errorf("serve without %s = %v, want an error naming it", missing, err)
		}
	}
}

func TestServeHealthReadyAndShutdown(t *testing.T) {
	t.Parallel()
	var logs logbuf.Buffer
	env := baseEnv(t, storetest.NewMigratedURL(t))
	base, stop := startServe(t, env, serveHooks{}, &logs)
	for _, path := range []string{"/healthz", "/readyz"} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s = %d, want 200", path, resp.StatusCode)
		}
		if resp.Header.Get("X-Request-Id") == "" {
			t.Errorf("GET %s has no X-Request-Id", path)
		}
	}
	if err := stop(); err != nil {
		t.Fatalf("graceful shutdown: %v", err)
	}
	if !strings.Contains(logs.String(), `"msg":"shutting down"`) || !strings.Contains(logs.String(), `"req_id"`) {
		t.Errorf("logs lack the shutdown line or request ids:\n%s", logs.String())
	}
	// The start-up log names the cursor key ids, signing key first, as the
	// cursor package doc promises.
	keys, err := os.ReadFile(env["HEYAIRA_CURSOR_KEY_FILE"])
	if err != nil {
		t.Fatal(err)
	}
	codec, err := cursor.ParseKeys(keys)
	if err != nil {
		t.Fatal(err)
	}
	ids, _ := json.Marshal(codec.KeyIDs())
	if want := `"msg":"cursor keys","key_ids":` + string(ids); !strings.Contains(logs.String(), want) {
		t.Errorf("logs lack %s:\n%s", want, logs.String())
	}
}
