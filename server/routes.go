package server

import (
	"log/slog"
	"net/http"

	"heyaira/cursor"
	"heyaira/github"
	"heyaira/server/authserver"
	"heyaira/server/internal/web"
	"heyaira/server/mcp"
	"heyaira/server/metrics"
	"heyaira/server/tools"
	"heyaira/store"
)

// addRoutes is the whole HTTP surface: every /mcp POST goes through
// mcp.CheckOrigin, and mcp.HandleMCP authenticates it before any dispatch.
func addRoutes(mux *http.ServeMux, logger *slog.Logger, cfg *Config, st *store.DB, gh *github.Client, cursors *cursor.Codec) {
	groups, inFlight := tools.New(logger, cfg.toolsConfig(), st, gh, cursors)
	table := mcp.NewToolTable(logger, web.NewRateLimiter(cfg.ToolRate, cfg.ToolBurst), cfg.Metrics, cfg.Now, groups...)

	rs := cfg.mcpConfig()
	origin := mcp.CheckOrigin(rs)
	mux.Handle("POST /mcp", origin(mcp.HandleMCP(logger, table, rs, mcp.StoreAuthenticator(st, cfg.Now))))
	mux.Handle("GET /mcp", mcp.HandleMethodNotAllowed())
	mux.Handle("DELETE /mcp", mcp.HandleMethodNotAllowed())

	mux.Handle("GET /.well-known/oauth-protected-resource/mcp", mcp.HandleResourceMetadata(rs, cfg.resource()))
	mux.Handle("OPTIONS /.well-known/oauth-protected-resource/mcp", mcp.HandleResourceMetadata(rs, cfg.resource()))
	mux.Handle("GET /.well-known/oauth-protected-resource", mcp.HandleResourceMetadata(rs, cfg.PublicURL))
	mux.Handle("OPTIONS /.well-known/oauth-protected-resource", mcp.HandleResourceMetadata(rs, cfg.PublicURL))

	// OAuth authorization server (docs/design.md §8, docs/oauth.md). No bearer:
	// these routes are how a client gets one. Pages use the session cookie.
	as := &authserver.Config{PublicURL: cfg.PublicURL, Now: cfg.Now, CIMD: cfg.CIMD, Secrets: cfg.secrets}
	registrations := authserver.NewRegistrationLimiter()
	mux.Handle("GET /.well-known/oauth-authorization-server", authserver.HandleMetadata(as))
	mux.Handle("OPTIONS /.well-known/oauth-authorization-server", authserver.HandleMetadata(as))
	mux.Handle("POST /oauth/register", authserver.HandleRegister(logger, as, st, registrations))
	mux.Handle("OPTIONS /oauth/register", authserver.HandleOAuthPreflight())
	mux.Handle("GET /oauth/authorize", authserver.HandleAuthorize(logger, as, st))
	mux.Handle("POST /oauth/authorize", authserver.HandleConsent(logger, as, st))
	mux.Handle("POST /oauth/token", authserver.HandleToken(logger, as, st))
	mux.Handle("OPTIONS /oauth/token", authserver.HandleOAuthPreflight())
	mux.Handle("POST /oauth/revoke", authserver.HandleRevoke(logger, as, st))
	mux.Handle("OPTIONS /oauth/revoke", authserver.HandleOAuthPreflight())
	mux.Handle("GET /signin", authserver.HandleSigninPage(logger, as, st))
	mux.Handle("POST /signin", authserver.HandleSignin(logger, as, st))

	if st != nil {
		cfg.Metrics.WatchRuntime(st.SQL(), inFlight)
		cfg.Metrics.WatchAudit(st.AuditSize)
	}
	if cfg.MetricsOnMain {
		mux.Handle("GET /metrics", metrics.Handler(cfg.Metrics))
	}
	mux.Handle("GET /healthz", handleHealthz())
	mux.Handle("GET /readyz", handleReadyz(st, cfg.Draining, cfg.GitHubProblem))
	mux.Handle("/", http.NotFoundHandler())
}
