package app

import (
	"cmp"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"heyaira/internal/publicurl"
	"heyaira/server"
	"heyaira/store"
)

// config is everything serve reads from the environment, read once.
type config struct {
	databaseURL    string
	listenAddr     string
	publicURL      string // no trailing slash; the OAuth issuer
	cursorKeyFile  string
	githubAppID    string
	githubKeyFile  string
	allowedOrigins []string
	metricsAddr    string
	metricsPublic  bool     // /metrics on the main listener too, without authentication
	cimdClients    []string // exact client-ID URLs; none: CIMD off
	trustedProxies []netip.Prefix
	githubInFlight int           // 0: the server's default
	dbMaxConns     int           // the database pool's bound per replica
	replicas       int           // replicas sharing the database; budgets are divided by it
	drainDelay     time.Duration // how long /readyz fails before the listener closes
	dbWait         time.Duration // how long serve waits for PostgreSQL at start; 0: no limit
}

func loadConfig(getenv func(string) string) (config, error) {
	c := config{
		databaseURL:   getenv("HEYAIRA_DATABASE_URL"),
		listenAddr:    cmp.Or(getenv("HEYAIRA_LISTEN_ADDR"), "127.0.0.1:8080"),
		cursorKeyFile: getenv("HEYAIRA_CURSOR_KEY_FILE"),
		githubAppID:   strings.TrimSpace(getenv("HEYAIRA_GITHUB_APP_ID")),
		githubKeyFile: getenv("HEYAIRA_GITHUB_APP_PRIVATE_KEY_FILE"),
		metricsAddr:   getenv("HEYAIRA_METRICS_ADDR"),
	}
	switch v := getenv("HEYAIRA_METRICS_PUBLIC"); v {
	case "", "0", "false":
	case "1", "true":
		c.metricsPublic = true
	default:
		return c, fmt.Errorf("HEYAIRA_METRICS_PUBLIC must be 1 or 0, not %q", v)
	}
	for _, o := range strings.Split(getenv("HEYAIRA_ALLOWED_ORIGINS"), ",") {
		if o = strings.TrimSpace(o); o != "" {
			if err := checkOrigin(o); err != nil {
				return c, err
			}
			c.allowedOrigins = append(c.allowedOrigins, strings.TrimRight(o, "/"))
		}
	}
	if getenv("HEYAIRA_CIMD_HOSTS") != "" {
		return c, errors.New("HEYAIRA_CIMD_HOSTS is no longer read: list each client's exact client-ID URL in " +
			"HEYAIRA_CIMD_CLIENTS instead, for example " +
			"HEYAIRA_CIMD_CLIENTS=https://claude.ai/oauth/claude-code-client-metadata (docs/oauth.md lists the known ones); then unset HEYAIRA_CIMD_HOSTS")
	}
	for _, u := range strings.Split(getenv("HEYAIRA_CIMD_CLIENTS"), ",") {
		if u = strings.TrimSpace(u); u != "" {
			c.cimdClients = append(c.cimdClients, u)
		}
	}
	var err error
	if c.trustedProxies, err = server.ParseTrustedProxies(getenv("HEYAIRA_TRUSTED_PROXIES")); err != nil {
		return c, err
	}
	var drain, wait int // seconds
	for _, v := range []struct {
		dst         *int
		name        string
		lo, hi, def int
	}{
		{&c.githubInFlight, "HEYAIRA_GITHUB_MAX_INFLIGHT", 1, 1000, 0},
		{&c.dbMaxConns, "HEYAIRA_DB_MAX_CONNS", 1, 1000, store.DefaultMaxConns},
		{&c.replicas, "HEYAIRA_REPLICAS", 1, 64, 1},
		{&drain, "HEYAIRA_DRAIN_SECONDS", 0, 300, 5},
		{&wait, dbWaitEnv, 0, 86400, 0},
	} {
		if *v.dst, err = envInt(getenv, v.name, v.lo, v.hi, v.def); err != nil {
			return c, err
		}
	}
	c.drainDelay = time.Duration(drain) * time.Second
	c.dbWait = time.Duration(wait) * time.Second
	if c.databaseURL == "" {
		return c, errors.New("HEYAIRA_DATABASE_URL is required")
	}
	if c.cursorKeyFile == "" {
		return c, errors.New("HEYAIRA_CURSOR_KEY_FILE is required (scripts/dev shows how to make one)")
	}
	if c.publicURL, err = publicurl.Check(getenv("HEYAIRA_PUBLIC_URL")); err != nil {
		return c, err
	}
	if c.metricsPublic && c.metricsAddr != "" {
		return c, errors.New("set HEYAIRA_METRICS_ADDR or HEYAIRA_METRICS_PUBLIC, not both")
	}
	return c, nil
}

// checkOrigin refuses an entry of HEYAIRA_ALLOWED_ORIGINS that can never
// equal an Origin header, which /mcp compares exactly: a browser sends
// scheme://host[:port] in lower case, with nothing after it (a bare host
// name, the usual mistake, would allow nothing).
func checkOrigin(o string) error {
	u, err := url.Parse(strings.TrimRight(o, "/"))
	if err != nil || u.Scheme == "" || u.Host == "" || u.Opaque != "" || u.User != nil ||
		u.Path != "" || u.RawQuery != "" || u.Fragment != "" || strings.HasSuffix(o, "?") {
		return fmt.Errorf("HEYAIRA_ALLOWED_ORIGINS: %q is not an origin: write scheme://host[:port] "+
			"with nothing after it, e.g. https://%s", o, exampleHost(o))
	}
	if o != strings.ToLower(o) {
		return fmt.Errorf("HEYAIRA_ALLOWED_ORIGINS: %q must be in lower case, as browsers send the Origin header", o)
	}
	return nil
}

// exampleHost is a host name taken from a malformed origin, for the hint.
func exampleHost(o string) string {
	if _, rest, ok := strings.Cut(o, "://"); ok {
		o = rest
	}
	if h, _, _ := strings.Cut(o, "/"); h != "" && !strings.ContainsAny(h, " \t") {
		return strings.ToLower(h)
	}
	return "app.example.com"
}

// envInt reads a whole number from lo to hi, or def when the variable is unset.
func envInt(getenv func(string) string, name string, lo, hi, def int) (int, error) {
	v := strings.TrimSpace(getenv(name))
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return 0, fmt.Errorf("%s must be a whole number from %d to %d", name, lo, hi)
	}
	return n, nil
}
