package app

import (
	"log/slog"
	"net/http"
	"sync/atomic"

	"heyaira/github"
	"heyaira/internal/secretfile"
)

// An App that is configured but cannot work does not stop serve: memory,
// task and workflow tools do not need GitHub, and every replica shares the
// same key, so refusing to start would take the whole service down for one
// bad file. Instead the start-up line is an ERROR that says what to do, and
// /readyz answers 200 "degraded" with the problem (below) until it is fixed.
// No App ID is a choice, not a fault (a memory-and-tasks deployment, or one
// before its App exists): document tools answer provider_unconfigured, one
// WARN line says so, and /readyz stays "ok".

// githubHealth holds the current App problem, "" for none.
type githubHealth struct {
	logger *slog.Logger
	state  atomic.Pointer[string]
}

// The problems /readyz reports, as stable words for monitoring; the log
// line beside each says what to do.
const (
	appKeyRefused  = "app_key_refused"       // the key file is unusable
	appIncomplete  = "app_config_incomplete" // an App ID without a key file
	appJWTRefused  = "app_jwt_refused"       // 401 at token mint: wrong App ID, or a key the App no longer has
	jwtRefusedHelp = "GitHub refused the App's JWT (401 at token mint): check HEYAIRA_GITHUB_APP_ID " +
		"and that the key file holds a key the App still has (docs/github-app.md), then restart serve; " +
		"until then document tools answer provider_forbidden and /readyz reports degraded"
)

func (h *githubHealth) problem() string {
	if p := h.state.Load(); p != nil {
		return *p
	}
	return ""
}

func (h *githubHealth) set(p string) { h.state.Store(&p) }

// observe follows token mints: a 401 sets appJWTRefused (logged once per
// change), a successful mint clears it (the App was fixed at GitHub).
func (h *githubHealth) observe(route string, status int) {
	if route != "access_tokens" {
		return
	}
	switch {
	case status == http.StatusUnauthorized && h.problem() != appJWTRefused:
		h.set(appJWTRefused)
		h.logger.Error(jwtRefusedHelp)
	case status == http.StatusCreated && h.problem() == appJWTRefused:
		h.set("")
		h.logger.Info("GitHub accepted the App's JWT again; /readyz reports ok")
	}
}

// githubConfig loads the App credentials, or says once why it cannot (above).
func githubConfig(cfg config, hooks Hooks, logger *slog.Logger) (github.Config, *githubHealth) {
	gc := github.Config{BaseURL: hooks.GitHubBaseURL, HTTP: hooks.GitHubHTTP, Timeout: hooks.GitHubTimeout, Now: hooks.GitHubNow, Logger: logger}
	health := &githubHealth{logger: logger}
	refuse := func(problem, msg string, attrs ...any) (github.Config, *githubHealth) {
		health.set(problem)
		logger.Error(msg+": document tools answer provider_unconfigured and /readyz reports degraded until it is fixed and serve restarted", attrs...)
		return gc, health
	}
	switch {
	case cfg.githubAppID == "":
		// The App ID is the switch: a key path alone (the shipped systemd
		// unit sets one) configures nothing, and its file is not read.
		logger.Warn("GitHub App not configured (no HEYAIRA_GITHUB_APP_ID): document tools answer provider_unconfigured")
		return gc, health
	case cfg.githubKeyFile == "":
		return refuse(appIncomplete, "HEYAIRA_GITHUB_APP_PRIVATE_KEY_FILE is not set but HEYAIRA_GITHUB_APP_ID is")
	}
	pemBytes, err := secretfile.Read(cfg.githubKeyFile)
	if err != nil {
		return refuse(appKeyRefused, "GitHub App key refused", "reason", err.Error())
	}
	key, err := github.ParseAppKey(pemBytes)
	if err != nil {
		// The path, never the contents: the reason names only what is wrong.
		return refuse(appKeyRefused, "GitHub App key refused", "path", cfg.githubKeyFile, "reason", err.Error())
	}
	gc.AppID = cfg.githubAppID
	gc.Key = key
	return gc, health
}
