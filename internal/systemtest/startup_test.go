package systemtest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"

	"heyaira/cursor"
	"heyaira/internal/app"
	"heyaira/internal/logbuf"
	"heyaira/store"
	"heyaira/store/storetest"
)

func TestServeRefusesMissingSchema(t *testing.T) {
	t.Parallel()
	env := baseEnv(t, storetest.NewURL(t))
	err := run(t.Context(), []string{"heyaira", "serve"}, env.get, nil, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "heyaira-admin migrate") {
		t.Fatalf("serve on an empty database = %v, want a message naming heyaira-admin migrate", err)
	}
}

// Row CR-01 (docs/security-tests.md).
func TestServeRefusesUnprotectedCursorKey(t *testing.T) {
	t.Parallel()
	env := baseEnv(t, storetest.NewMigratedURL(t))
	env["HEYAIRA_CURSOR_KEY_FILE"] = writeFile(t, "cursor.key", hexKey(), 0o644)
	err := run(t.Context(), []string{"heyaira", "serve"}, env.get, nil, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "group or others") {
		t.Fatalf("serve with a 0644 key file = %v, want a refusal", err)
	}
}

// Row CR-01 (docs/security-tests.md).
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
	base, stop := startServe(t, env, app.Hooks{}, &logs)
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

// Row VC-06 (start-up): serve warns, before anything else can fail, when
// HEYAIRA_TRUSTED_PROXIES holds a range rather than proxy addresses, naming
// the range; a list of addresses draws no warning.
func TestTrustedProxyRangesWarn(t *testing.T) {
	t.Parallel()
	for proxies, want := range map[string]bool{"10.0.0.0/24, 10.0.1.5": true, "10.0.0.7, 10.0.1.5": false} {
		env := baseEnv(t, "postgres://127.0.0.1:1/none?connect_timeout=1&sslmode=disable")
		env["HEYAIRA_TRUSTED_PROXIES"] = proxies
		ctx, cancel := context.WithCancel(t.Context())
		cancel() // serve stops at the database; the warning comes first
		var out bytes.Buffer
		app.Serve(ctx, func(k string) string { return env[k] }, &out, app.Hooks{})
		got := strings.Contains(out.String(), "HEYAIRA_TRUSTED_PROXIES holds ranges") && strings.Contains(out.String(), "10.0.0.0/24")
		if got != want {
			t.Errorf("%q: warned %v, want %v:\n%s", proxies, got, want, out.String())
		}
	}
}

// Serve warns, before its configuration can fail, about each
// HEYAIRA_* variable it does not read, by name (never value), with the
// nearest known name; a name its getenv does not see is not warned about.
// Row BT-45 (docs/security-tests.md).
func TestUnknownVariablesWarn(t *testing.T) {
	t.Parallel()
	env := map[string]string{"HEYAIRA_TRUSTED_PROXY": "10.9.8.7", "HEYAIRA_DATABASE_ULR": "postgres://secret-canary@x",
		"HEYAIRA_WHATEVER": "1", "HOME": "/root"}
	environ := []string{"HEYAIRA_TRUSTED_PROXY=10.9.8.7", "HEYAIRA_DATABASE_ULR=postgres://secret-canary@x",
		"HEYAIRA_WHATEVER=1", "HOME=/root", "HEYAIRA_NOT_MINE=1", "HEYAIRA_EMPTY="}
	var out bytes.Buffer
	err := app.Serve(t.Context(), func(k string) string { return env[k] }, &out, app.Hooks{Environ: func() []string { return environ }})
	if err == nil || !strings.Contains(err.Error(), "HEYAIRA_DATABASE_URL is required") {
		t.Fatalf("serve: %v, want the missing database URL", err)
	}
	var warned []string
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if strings.Contains(line, `"level":"WARN"`) && strings.Contains(line, "unknown HEYAIRA_ variable") {
			warned = append(warned, line)
		}
	}
	want := []string{
		`"name":"HEYAIRA_TRUSTED_PROXY","did_you_mean":"HEYAIRA_TRUSTED_PROXIES"`,
		`"name":"HEYAIRA_DATABASE_ULR","did_you_mean":"HEYAIRA_DATABASE_URL"`,
		`"name":"HEYAIRA_WHATEVER"}`,
	}
	if len(warned) != len(want) {
		t.Fatalf("%d warnings, want %d:\n%s", len(warned), len(want), out.String())
	}
	for i, w := range want {
		if !strings.Contains(warned[i], w) {
			t.Errorf("warning %d = %s, want %s", i, warned[i], w)
		}
	}
	if strings.Contains(out.String(), "secret-canary") || strings.Contains(out.String(), "10.9.8.7") {
		t.Errorf("a value reached the log:\n%s", out.String())
	}
}

// TestServeDBPoolBound: HEYAIRA_DB_MAX_CONNS bounds serve's database pool
// (store.DefaultMaxConns without it), as /metrics reports it.
func TestServeDBPoolBound(t *testing.T) {
	t.Parallel()
	dbURL := storetest.NewMigratedURL(t)
	for _, tc := range []struct{ set, want string }{{"", strconv.Itoa(store.DefaultMaxConns)}, {"3", "3"}} {
		env := baseEnv(t, dbURL)
		env["HEYAIRA_METRICS_PUBLIC"] = "1"
		if tc.set != "" {
			env["HEYAIRA_DB_MAX_CONNS"] = tc.set
		}
		var logs logbuf.Buffer
		base, stop := startServe(t, env, app.Hooks{}, &logs)
		resp, err := http.Get(base + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if want := "\nheyaira_db_connections_max " + tc.want + "\n"; !strings.Contains(string(b), want) {
			t.Errorf("HEYAIRA_DB_MAX_CONNS=%q: /metrics lacks %q", tc.set, strings.TrimSpace(want))
		}
		if err := stop(); err != nil {
			t.Fatal(err)
		}
	}
}
