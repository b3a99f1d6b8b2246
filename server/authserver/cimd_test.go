package authserver

import (
	"testing"
	"time"
)

// TestCIMDFreshFor pins the cache bounds documented in docs/oauth.md.
func TestCIMDFreshFor(t *testing.T) {
	t.Parallel()
	for cc, want := range map[string]time.Duration{
		"":                         time.Hour,
		"public, max-age=300":      5 * time.Minute,
		"max-age=5":                time.Minute,
		"max-age=99999999":         24 * time.Hour,
		"no-store":                 0,
		"max-age=600, no-cache":    0,
		"max-age=x":                0,
		"max-age=60, max-age=6000": 0,
		"private, max-age=7200":    2 * time.Hour,
	} {
		if got := cimdFreshFor(cc); got != want {
			t.Errorf("cimdFreshFor(%q) = %v, want %v", cc, got, want)
		}
	}
}

// TestCIMDClients: HEYAIRA_CIMD_CLIENTS takes exact https client-ID URLs
// that pass the URL gate; none means off.
// Row CM-05 (docs/security-tests.md).
func TestCIMDClients(t *testing.T) {
	t.Parallel()
	if c, err := NewCIMD(nil, nil, nil); c != nil || err != nil {
		t.Errorf("no URLs: %v, %v; want off", c, err)
	}
	urls := []string{"https://claude.ai/oauth/claude-code-client-metadata", "https://vscode.dev/oauth/client-metadata.json"}
	if c, err := NewCIMD(urls, nil, nil); c == nil || err != nil || !c.listed(urls[1]) || c.listed("https://vscode.dev/other") {
		t.Errorf("%v: %v, %v", urls, c, err)
	}
	for _, u := range []string{"claude.ai", "https://claude.ai", "https://claude.ai/", "https://Claude.ai/x", "http://claude.ai/x",
		"https://127.0.0.1/x", "https://claude.ai/x?y=1", "https://claude.ai/a/../b", "https://user@claude.ai/x"} {
		if _, err := NewCIMD([]string{u}, nil, nil); err == nil {
			t.Errorf("URL %q accepted", u)
		}
	}
}
