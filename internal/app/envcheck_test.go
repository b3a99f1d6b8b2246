package app

import (
	"slices"
	"strings"
	"testing"
)

// HEYAIRA_ALLOWED_ORIGINS is compared exactly with the Origin
// header, so an entry that is not scheme://host[:port] in lower case can
// never match; serve refuses it at start-up, saying how to write it.
// Row BT-45 (docs/security-tests.md).
func TestAllowedOriginsMustBeOrigins(t *testing.T) {
	t.Parallel()
	for origins, want := range map[string]string{
		"https://app.example.com, http://127.0.0.1:6274/": "",
		"chrome-extension://abcdefgh":                     "",
		"example.com":                                     `"example.com" is not an origin: write scheme://host[:port] with nothing after it, e.g. https://example.com`,
		"https://ok.example, app.example.com:8443":        `"app.example.com:8443" is not an origin`,
		"https://app.example.com/mcp":                     `"https://app.example.com/mcp" is not an origin`,
		"https://app.example.com?x":                       "is not an origin",
		"https://user@app.example.com":                    "is not an origin",
		"null":                                            `"null" is not an origin`,
		"https://App.Example.com":                         "must be in lower case",
	} {
		env := map[string]string{"HEYAIRA_DATABASE_URL": "postgres://x", "HEYAIRA_CURSOR_KEY_FILE": "/k", "HEYAIRA_ALLOWED_ORIGINS": origins}
		_, err := loadConfig(func(k string) string { return env[k] })
		switch {
		case want == "" && err != nil:
			t.Errorf("%q: refused: %v", origins, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%q: err = %v, want %q", origins, err, want)
		}
	}
}

// configVars and retiredVars are exactly what loadConfig reads (besides
// Go's GOGC, read by gc.go), so the unknown-variable warning and the
// documentation test know every setting.
// Row BT-45 (docs/security-tests.md).
func TestConfigVarsAreWhatServeReads(t *testing.T) {
	t.Parallel()
	env := map[string]string{"HEYAIRA_DATABASE_URL": "postgres://x", "HEYAIRA_CURSOR_KEY_FILE": "/k"}
	var read []string
	if _, err := loadConfig(func(k string) string { read = append(read, k); return env[k] }); err != nil {
		t.Fatal(err)
	}
	slices.Sort(read)
	want := slices.Concat(configVars, retiredVars)
	slices.Sort(want)
	if !slices.Equal(slices.Compact(read), want) {
		t.Errorf("loadConfig reads %v\nconfigVars lists %v", read, want)
	}
}
