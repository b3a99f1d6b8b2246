package server

import (
	"cmp"
	"net/netip"
	"sync/atomic"
	"time"

	"heyaira/oauth"
	"heyaira/server/authserver"
	"heyaira/server/mcp"
	"heyaira/server/metrics"
	"heyaira/server/tools"
	"heyaira/store"
)

// Config is the server's configuration, read once by main.
type Config struct {
	// PublicURL is the external base URL without a trailing slash. It is the
	// OAuth issuer; the MCP resource is PublicURL + "/mcp".
	PublicURL string
	// AllowedOrigins are the values an Origin header on /mcp may carry besides
	// PublicURL's own origin (a check against CSRF and DNS rebinding; it is
	// not CORS: /mcp sends no Access-Control-* header).
	AllowedOrigins []string
	// Version is reported in serverInfo.
	Version string
	// ToolRate and ToolBurst bound tool calls per principal (per second, burst).
	ToolRate  float64
	ToolBurst int
	// TrustedProxies are the peers whose X-Forwarded-For is believed, for
	// the client address used by rate limits and logs (docs/deploy.md).
	TrustedProxies []netip.Prefix
	// GitHubInFlight caps concurrent GitHub requests per replica (default 64);
	// GitHubWait is how long a call waits for a slot before rate_limited.
	GitHubInFlight int
	GitHubWait     time.Duration
	// GitHubProjectShare and GitHubPrincipalShare cap one project's and one
	// principal's concurrent GitHub requests (default a quarter and an
	// eighth of GitHubInFlight). GitHubHourlyBudget is a project's GitHub
	// requests per hour unless an administrator set another (default 1000).
	// See flights.go and githubbudget.go.
	GitHubProjectShare   int
	GitHubPrincipalShare int
	GitHubHourlyBudget   int
	// Replicas is how many replicas share one PostgreSQL (default 1). The
	// per-principal tool-call budget, the default GitHub cap and each
	// project's hourly GitHub budget are divided by it, so that the whole
	// deployment stays within one replica's figures (docs/deploy.md gives
	// the tolerance).
	Replicas int
	// GitHubProblem, if set, says why document tools cannot work although
	// an App was configured (a refused key, a JWT GitHub refused); "" means
	// none. /readyz then answers 200 "degraded" with the reason: the other
	// tools still work, so the replica stays in service, but it is visible.
	GitHubProblem func() string
	// Draining, once set, makes /readyz answer 503 so a load balancer stops
	// sending new requests while in-flight ones finish (docs/deploy.md).
	Draining *atomic.Bool
	// Now is the clock (tests inject one); nil means time.Now.
	Now func() time.Time
	// Metrics receives counters and histograms; nil means a private registry.
	// main shares it with the GitHub client's hooks.
	Metrics *metrics.Metrics
	// MetricsOnMain serves /metrics on the main listener, to anyone who can
	// reach it. Off by default: metrics name projects' traffic, so an
	// operator serves them on a separate address (metrics.Handler) or
	// says that the main listener is private.
	MetricsOnMain bool
	// CIMD accepts client ID metadata document URLs as client ids (see
	// authserver.NewCIMD); nil, the default, means off.
	CIMD *authserver.CIMD

	// secrets mints and recognises every secret the server issues; NewServer
	// derives its keys from the cursor key file (oauth/minted.go).
	secrets *oauth.Secrets
}

func (c *Config) setDefaults() {
	c.Replicas = max(c.Replicas, 1)
	c.ToolRate = cmp.Or(c.ToolRate, 50/float64(c.Replicas))
	c.ToolBurst = cmp.Or(c.ToolBurst, max(100/c.Replicas, 1))
	c.GitHubInFlight = cmp.Or(c.GitHubInFlight, max(64/c.Replicas, 1))
	c.GitHubProjectShare = cmp.Or(c.GitHubProjectShare, max(1, c.GitHubInFlight/4))
	c.GitHubPrincipalShare = cmp.Or(c.GitHubPrincipalShare, max(1, c.GitHubInFlight/8))
	c.GitHubHourlyBudget = cmp.Or(c.GitHubHourlyBudget, store.DefaultLimits.GitHubRequestsHourly)
	c.GitHubWait = cmp.Or(c.GitHubWait, 2*time.Second)
	c.Version = cmp.Or(c.Version, "dev")
	c.Draining = cmp.Or(c.Draining, &atomic.Bool{})
	c.Metrics = cmp.Or(c.Metrics, metrics.New())
	if c.Now == nil {
		c.Now = time.Now
	}
}

// toolsConfig is what the tools read of cfg.
func (c *Config) toolsConfig() tools.Config {
	return tools.Config{Now: c.Now, GitHubInFlight: c.GitHubInFlight, GitHubWait: c.GitHubWait,
		GitHubProjectShare: c.GitHubProjectShare, GitHubPrincipalShare: c.GitHubPrincipalShare,
		GitHubHourlyBudget: c.GitHubHourlyBudget, Replicas: c.Replicas}
}

// mcpConfig is what the MCP endpoint reads of cfg.
func (c *Config) mcpConfig() *mcp.Config {
	return &mcp.Config{PublicURL: c.PublicURL, AllowedOrigins: c.AllowedOrigins, Version: c.Version, Now: c.Now, Secrets: c.secrets}
}

// resource is the MCP resource identifier: the audience every token must carry.
func (c *Config) resource() string { return c.PublicURL + "/mcp" }
