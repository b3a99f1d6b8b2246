package main

import (
	"strings"
	"testing"
	"time"
)

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
	} {
		for _, v := range bad {
			if _, err := load(map[string]string{name: v}); err == nil || !strings.Contains(err.Error(), name) {
				t.Errorf("%s=%q: %v, want an error naming it", name, v, err)
			}
		}
	}
	c, err := load(map[string]string{"HEYAIRA_TRUSTED_PROXIES": "10.0.0.0/8, 192.0.2.7", "HEYAIRA_REPLICAS": "3",
		"HEYAIRA_GITHUB_MAX_INFLIGHT": "20", "HEYAIRA_DRAIN_SECONDS": "0"})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.trustedProxies) != 2 || c.trustedProxies[1].String() != "192.0.2.7/32" || c.replicas != 3 ||
		c.githubInFlight != 20 || c.drainDelay != 0 {
		t.Errorf("config = %+v", c)
	}
	if c, _ := load(nil); len(c.trustedProxies) != 0 || c.replicas != 1 || c.githubInFlight != 0 || c.drainDelay != 5*time.Second {
		t.Errorf("defaults = %+v", c)
	}
}
