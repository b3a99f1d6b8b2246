package main

import (
	"strings"
	"testing"
)

// TestBT05PublicURLAndMetricsSettings: serve refuses at start, with the
// reason, a public URL it could not serve correctly (a path, which would put
// the OAuth metadata where no client looks; http on a host that is not
// loopback, which OAuth 2.1 forbids), and an ambiguous metrics setting.
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
		{map[string]string{"HEYAIRA_METRICS_PUBLIC": "1"}, ""},
		{map[string]string{"HEYAIRA_METRICS_PUBLIC": "yes"}, `HEYAIRA_METRICS_PUBLIC must be 1 or 0, not "yes"`},
		{map[string]string{"HEYAIRA_METRICS_PUBLIC": "1", "HEYAIRA_METRICS_ADDR": "127.0.0.1:9090"}, "not both"},
	} {
		c, err := load(tt.env)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%v: refused: %v", tt.env, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%v: err = %v, want %q", tt.env, err, tt.want)
		case tt.want == "" && c.metricsPublic != (tt.env["HEYAIRA_METRICS_PUBLIC"] == "1"):
			t.Errorf("%v: metricsPublic = %v", tt.env, c.metricsPublic)
		}
	}
}
