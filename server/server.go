// Package server wires HeyAira's HTTP surface: Config, NewServer (the
// middleware around every route), the one route table (routes.go) and
// health. Its subpackages, each a trust domain the compiler keeps apart
// (internal/lint's TestImportsFlowOneWay):
//
//   - mcp: the resource server, POST /mcp: strict JSON-RPC, the bearer
//     token's MAC before the body and the database after the parse, scopes,
//     the per-principal tool limit, and the tool table;
//   - tools: the tools themselves and GitHub fairness; they never see an
//     HTTP request, only an authenticated mcp.Principal;
//   - authserver: the OAuth authorization server, sign-in and CIMD; it
//     imports neither mcp nor tools;
//   - catalog: profile layers assembled from text it is given;
//   - metrics and internal/web: what every handler shares.
//
// Each subpackage's tests sit beside it; those that need the whole server
// start it through internal/servertest, which the tests of this package,
// for what crosses the subpackages, share too.
//
// Errors reach clients only as stable codes with public messages
// (mcp/errors.go); internal detail is logged with the request id.
package server

import (
	"log/slog"
	"net/http"

	"heyaira/cursor"
	"heyaira/github"
	"heyaira/oauth"
	"heyaira/server/authserver"
	"heyaira/server/internal/web"
	"heyaira/store"
)

// NewServer returns the whole HTTP handler. Every dependency is passed in.
func NewServer(logger *slog.Logger, cfg Config, st *store.DB, gh *github.Client, cursors *cursor.Codec) http.Handler {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	cfg.setDefaults()
	cfg.secrets = oauth.NewSecrets(cursors.Derive(oauth.KeyLabel))
	mux := http.NewServeMux()
	addRoutes(mux, logger, &cfg, st, gh, cursors)
	var h http.Handler = mux
	h = web.WithSecurityHeaders(h)
	h = web.WithAccessLog(logger, cfg.Metrics, h)
	// Outside the access log: it replaces the request, and the access log
	// reads the route from the request the mux saw.
	h = web.WithClientAddr(cfg.TrustedProxies, h)
	h = web.WithRecover(logger, h)
	h = web.WithRequestID(h)
	return h
}

// ParseTrustedProxies and TrustedRanges read HEYAIRA_TRUSTED_PROXIES for
// the program (internal/app); the client address lives in web.
var (
	ParseTrustedProxies = web.ParseTrustedProxies
	TrustedRanges       = web.TrustedRanges
)

// NewCIMD returns the resolver of client ID metadata documents for the
// listed URLs (authserver.NewCIMD), for Config.CIMD.
var NewCIMD = authserver.NewCIMD
