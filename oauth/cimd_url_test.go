package oauth

import (
	"errors"
	"strings"
	"testing"
)

// TestCheckClientIDURL: the gate accepts the published document URLs and
// refuses every other shape before any network I/O.
// Row CM-05 (docs/security-tests.md).
func TestCheckClientIDURL(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{
		"https://claude.ai/oauth/claude-code-client-metadata",
		"https://claude.ai/oauth/mcp-oauth-client-metadata",
		"https://vscode.dev/oauth/client-metadata.json",
		"https://chatgpt.com/oauth/codex/client.json",
		"https://claude.ai:443/oauth/x",
		"https://claude.ai/a%41b",
	} {
		if _, err := CheckClientIDURL(ok); err != nil {
			t.Errorf("%s refused: %v", ok, err)
		}
	}
	for s, want := range map[string]error{
		"http://claude.ai/x":                                       ErrClientIDURL,
		"https://claude.ai":                                        ErrClientIDURL,
		"https://claude.ai/":                                       ErrClientIDURL,
		"https://claude.ai?x":                                      ErrClientIDURL,
		"https://claude.ai/x?y=1":                                  ErrClientIDQuery,
		"https://claude.ai/x#f":                                    ErrClientIDURL,
		"https://u@claude.ai/x":                                    ErrClientIDURL,
		"https://u:p@claude.ai/x":                                  ErrClientIDURL,
		"https://claude.ai:8443/x":                                 ErrClientIDURL,
		"https://claude.ai:443:443/x":                              ErrClientIDURL,
		"https://claude.ai/./x":                                    ErrClientIDDotPath,
		"https://claude.ai/a/..":                                   ErrClientIDDotPath,
		"https://claude.ai/%2e%2e/x":                               ErrClientIDDotPath,
		"https://claude.ai/%2E/x":                                  ErrClientIDDotPath,
		"https://claude.ai/a//b":                                   ErrClientIDURL,
		"https://claude.ai/a/":                                     ErrClientIDURL,
		"https://claude.ai/a%2fb":                                  ErrClientIDURL,
		"https://claude.ai/a%5cb":                                  ErrClientIDURL,
		"https://claude.ai/a%00b":                                  ErrClientIDURL,
		"https://claude.ai/a%zz":                                   ErrClientIDURL,
		"https://claude.ai/a\\b":                                   ErrClientIDURL,
		"https://claude.ai/a b":                                    ErrClientIDURL,
		"https://claude.ai/a\tb":                                   ErrClientIDURL,
		"https://claude.ai/é":                                      ErrClientIDURL,
		"https://claude.ai\\.evil.com/x":                           ErrClientIDURL,
		"https://Claude.ai/x":                                      ErrClientIDURL,
		"https://claude.ai/x@evil.com/y":                           ErrClientIDURL,
		"https://127.0.0.1/x":                                      ErrClientIDURL,
		"https://[::1]/x":                                          ErrClientIDURL,
		"https://2130706433/x":                                     ErrClientIDURL,
		"https://claude.ai/" + strings.Repeat("a", MaxClientIDURL): ErrClientIDURL,
	} {
		if _, err := CheckClientIDURL(s); !errors.Is(err, want) {
			t.Errorf("CheckClientIDURL(%q) = %v, want %v", s, err, want)
		}
	}
}

// FuzzCheckClientIDURL: whatever passes the gate is https on the host it
// returns, without the characters and segments the gate refuses.
// Row CM-05 (docs/security-tests.md).
func FuzzCheckClientIDURL(f *testing.F) {
	f.Add("https://claude.ai/oauth/claude-code-client-metadata")
	f.Add("https://claude.ai/%2e%2e/x")
	f.Fuzz(func(t *testing.T, s string) {
		host, err := CheckClientIDURL(s)
		if err != nil {
			return
		}
		if host == "" || !strings.HasPrefix(s, "https://"+host) || strings.ContainsAny(s, "?#\\@ ") ||
			strings.Contains(s, "/../") || strings.Contains(s, "/./") || strings.HasSuffix(s, "/..") {
			t.Fatalf("accepted %q (host %q)", s, host)
		}
	})
}
