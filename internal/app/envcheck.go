package app

import (
	"log/slog"
	"slices"
	"strings"

	"heyaira/internal/nearest"
)

// configVars are the HEYAIRA_* variables that HeyAira reads: serve's
// (loadConfig) and the admin CLI's, which are a subset. README.md's
// configuration table documents each; lint_docs_test.go checks both ways.
var configVars = []string{
	"HEYAIRA_DATABASE_URL", "HEYAIRA_LISTEN_ADDR", "HEYAIRA_PUBLIC_URL", "HEYAIRA_CURSOR_KEY_FILE",
	"HEYAIRA_GITHUB_APP_ID", "HEYAIRA_GITHUB_APP_PRIVATE_KEY_FILE", "HEYAIRA_ALLOWED_ORIGINS",
	"HEYAIRA_METRICS_ADDR", "HEYAIRA_METRICS_PUBLIC", "HEYAIRA_CIMD_CLIENTS", "HEYAIRA_TRUSTED_PROXIES",
	"HEYAIRA_GITHUB_MAX_INFLIGHT", "HEYAIRA_REPLICAS", "HEYAIRA_DRAIN_SECONDS", "HEYAIRA_DB_WAIT_SECONDS",
	"HEYAIRA_DB_MAX_CONNS",
}

// retiredVars are read only to refuse them, with the setting that replaced
// each (loadConfig).
var retiredVars = []string{"HEYAIRA_CIMD_HOSTS"}

// warnUnknownVars logs one warning per HEYAIRA_* variable of environ that
// HeyAira does not read, with the nearest known name when one is close: a
// misspelled setting (HEYAIRA_TRUSTED_PROXY) is otherwise ignored without a
// word. Only names are logged, never values. A name that getenv does not
// see is not this server's configuration (tests hand serve a map of their
// own while the process has other variables), so it is left alone.
func warnUnknownVars(environ []string, getenv func(string) string, logger *slog.Logger) {
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "HEYAIRA_") || slices.Contains(configVars, name) || getenv(name) == "" {
			continue
		}
		attrs := []any{"name", name}
		if near := nearest.Name(name, configVars); near != "" {
			attrs = append(attrs, "did_you_mean", near)
		}
		logger.Warn("unknown HEYAIRA_ variable ignored: check its spelling against README.md's configuration table", attrs...)
	}
}

// ConfigVars lists every variable Serve reads, for the documentation test
// (internal/lint).
func ConfigVars() []string { return slices.Clone(configVars) }

// RetiredVars lists the variables Serve reads only to refuse them, which the
// upgrade notes name.
func RetiredVars() []string { return slices.Clone(retiredVars) }
