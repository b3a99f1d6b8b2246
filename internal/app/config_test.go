package app

import (
	"bytes"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"heyaira/store"
)

// TestBT05PublicURLAndMetricsSettings: serve refuses at start, with the
// reason, a public URL it could not serve correctly (a path, which would put
// the OAuth metadata where no client looks; http on a host that is not
// loopback, which OAuth 2.1 forbids), and an ambiguous metrics setting.
// Row CM-10 (docs/security-tests.md).
func TestBT05PublicURLAndMetricsSettings(t *testing.T) {
	t.Parallel()
	base := map[string]string{"HEYAIRA_DATABASE_URL": "postgres://x", "HEYAIRA_CURSOR_KEY_FILE": "/k"}
	load := func(extra map[string]string) (config, error) {
		return loadConfig(func(k string) string {
			if v, ok := extra[k]; ok {
				return v
			}
			return base[k]
		})
	}
	for _, tt := range []struct {
		env  map[string]string
		want string // "" = accepted
	}{
		{map[string]string{}, ""},
		{map[string]string{"HEYAIRA_PUBLIC_URL": "http://127.0.0.1:8080/"}, ""},
		{map[string]string{"HEYAIRA_PUBLIC_URL": "http://localhost:8080"}, ""},
		{map[string]string{"HEYAIRA_PUBLIC_URL": "http://[::1]:8080"}, ""},
		{map[string]string{"HEYAIRA_PUBLIC_URL": "https://mcp.example.com"}, ""},
		{map[string]string{"HEYAIRA_PUBLIC_URL": "https://mcp.example.com/heyaira"}, `must not have a path ("/heyaira")`},
		{map[string]string{"HEYAIRA_PUBLIC_URL": "http://127.0.0.1:8080/mcp/"}, `must not have a path ("/mcp")`},
		{map[string]string{"HEYAIRA_PUBLIC_URL": "http://mcp.example.com"}, "uses http on mcp.example.com, which is not a loopback address"},
		{map[string]string{"HEYAIRA_PUBLIC_URL": "http://10.0.0.5:8080"}, "OAuth needs TLS"},
		{map[string]string{"HEYAIRA_PUBLIC_URL": "https://MCP.example.com"}, "canonical form: https://mcp.example.com"},
		{map[string]string{"HEYAIRA_PUBLIC_URL": "https://mcp.example.com:443"}, "canonical form: https://mcp.example.com"},
		{map[string]string{"HEYAIRA_PUBLIC_URL": "HTTPS://mcp.example.com"}, "canonical form: https://mcp.example.com"},
		{map[string]string{"HEYAIRA_PUBLIC_URL": "https://mcp.example.com:8443"}, ""},
		{map[string]string{"HEYAIRA_PUBLIC_URL": "https://mcp.example.com:"}, "canonical form: https://mcp.example.com"},
		{map[string]string{"HEYAIRA_PUBLIC_URL": "http://[::1]:8080"}, ""},
		{map[string]string{"HEYAIRA_PUBLIC_URL": "http://[::1]:80"}, "canonical form: http://[::1]"},
		{map[string]string{"HEYAIRA_METRICS_PUBLIC": "1"}, ""},
		{map[string]string{"HEYAIRA_METRICS_PUBLIC": "yes"}, `HEYAIRA_METRICS_PUBLIC must be 1 or 0, not "yes"`},
		{map[string]string{"HEYAIRA_METRICS_PUBLIC": "1", "HEYAIRA_METRICS_ADDR": "127.0.0.1:9090"}, "not both"},
		{map[string]string{"HEYAIRA_CIMD_HOSTS": "claude.ai"},
			"HEYAIRA_CIMD_HOSTS is no longer read: list each client's exact client-ID URL in HEYAIRA_CIMD_CLIENTS instead, " +
				"for example HEYAIRA_CIMD_CLIENTS=https://claude.ai/oauth/claude-code-client-metadata"},
		{map[string]string{"HEYAIRA_CIMD_CLIENTS": " https://claude.ai/oauth/claude-code-client-metadata, https://vscode.dev/oauth/client-metadata.json"}, ""},
	} {
		c, err := load(tt.env)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%v: refused: %v", tt.env, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%v: err = %v, want %q", tt.env, err, tt.want)
		case tt.want == "" && c.metricsPublic != (tt.env["HEYAIRA_METRICS_PUBLIC"] == "1"):
			t.Errorf("%v: metricsPublic = %v", tt.env, c.metricsPublic)
		case tt.want == "" && tt.env["HEYAIRA_CIMD_CLIENTS"] != "" && len(c.cimdClients) != 2:
			t.Errorf("%v: cimdClients = %q", tt.env, c.cimdClients)
		}
	}
}

// The topology settings: each bad value is refused at start-up with a
// message naming the variable; good ones are read as documented.
func TestTopologyConfig(t *testing.T) {
	t.Parallel()
	base := map[string]string{"HEYAIRA_DATABASE_URL": "postgres://unused", "HEYAIRA_CURSOR_KEY_FILE": "/nonexistent"}
	load := func(extra map[string]string) (config, error) {
		return loadConfig(func(k string) string {
			if v, ok := extra[k]; ok {
				return v
			}
			return base[k]
		})
	}
	for name, bad := range map[string][]string{
		"HEYAIRA_TRUSTED_PROXIES":     {"10.0.0.0/33", "proxy.example", "10.0.0.1;10.0.0.2"},
		"HEYAIRA_REPLICAS":            {"0", "-1", "two", "65"},
		"HEYAIRA_GITHUB_MAX_INFLIGHT": {"0", "1001", "1.5"},
		"HEYAIRA_DRAIN_SECONDS":       {"-1", "301", "5s"},
		"HEYAIRA_DB_MAX_CONNS":        {"0", "1001", "eight"},
	} {
		for _, v := range bad {
			if _, err := load(map[string]string{name: v}); err == nil || !strings.Contains(err.Error(), name) {
				t.Errorf("%s=%q: %v, want an error naming it", name, v, err)
			}
		}
	}
	c, err := load(map[string]string{"HEYAIRA_TRUSTED_PROXIES": "10.0.0.0/8, 192.0.2.7", "HEYAIRA_REPLICAS": "3",
		"HEYAIRA_GITHUB_MAX_INFLIGHT": "20", "HEYAIRA_DRAIN_SECONDS": "0", "HEYAIRA_DB_MAX_CONNS": "24"})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.trustedProxies) != 2 || c.trustedProxies[1].String() != "192.0.2.7/32" || c.replicas != 3 ||
		c.githubInFlight != 20 || c.drainDelay != 0 || c.dbMaxConns != 24 {
		t.Errorf("config = %+v", c)
	}
	if c, _ := load(nil); len(c.trustedProxies) != 0 || c.replicas != 1 || c.githubInFlight != 0 || c.drainDelay != 5*time.Second ||
		c.dbMaxConns != store.DefaultMaxConns {
		t.Errorf("defaults = %+v", c)
	}
}

// TestTuneGC: serve sets the collector's target to gcPercent, unless the
// operator chose one with GOGC; either way the start-up log gives the
// target in effect. Not parallel: the target is the process's.
func TestTuneGC(t *testing.T) {
	prev := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(prev) })
	for _, tt := range []struct {
		name, gogc string
		percent    int // in effect afterwards
	}{
		{"unset: the default", "", gcPercent},
		{"set: left as the runtime applied it", "150", 100}, // this process did not start with GOGC=150
	} {
		t.Run(tt.name, func(t *testing.T) {
			debug.SetGCPercent(100)
			var log bytes.Buffer
			tuneGC(func(k string) string {
				if k == "GOGC" {
					return tt.gogc
				}
				return ""
			}, slog.New(slog.NewJSONHandler(&log, nil)))
			if got := debug.SetGCPercent(100); got != tt.percent {
				t.Errorf("GC percent %d, want %d", got, tt.percent)
			}
			from := map[bool]string{true: "default", false: "GOGC"}[tt.gogc == ""]
			if want := fmt.Sprintf(`"gogc":%d,"from":%q`, tt.percent, from); !strings.Contains(log.String(), want) {
				t.Errorf("start-up log %q lacks %s", log.String(), want)
			}
		})
	}
}
