package app

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"heyaira/cursor"
	"heyaira/github"
	"heyaira/internal/secretfile"
	"heyaira/server"
	"heyaira/server/metrics"
)

// Hooks lets Go code, never configuration, point the server at a fake
// GitHub and hand it a listener whose port it already knows: the system
// tests, the load harness and the demo (internal/demo). Run passes none
// but Environ, and the production binary has no way to set one
// (TestMP01NoContextValuesOrHookFields, internal/lint).
type Hooks struct {
	GitHubBaseURL string
	GitHubHTTP    *http.Client
	GitHubTimeout time.Duration // 0: github.DefaultTimeout
	// GitHubNow is the clock of App JWTs and token expiry (nil: the wall
	// clock). A fake GitHub whose clock tests move must share it, or a JWT
	// signed by the wall clock is refused once the fake's clock lags.
	GitHubNow func() time.Time
	Listener  net.Listener
	Tune      func(*server.Config) // changes the server's configuration (the load harness)
	// CIMDDial and CIMDRoots reach a local TLS stand-in for the hosts of
	// client ID metadata documents; nil in production.
	CIMDDial  func(ctx context.Context, network, addr string) (net.Conn, error)
	CIMDRoots *x509.CertPool
	// Environ lists the process environment (Run passes os.Environ), for the
	// warning on unknown HEYAIRA_* names; nil: no such check.
	Environ func() []string
}

// ShutdownGrace bounds how long in-flight requests may take after the
// listener closes (a 1 MiB read takes milliseconds; GitHub calls time out
// sooner than this).
const ShutdownGrace = 20 * time.Second

// Serve runs the HTTP server until ctx is done, then shuts down gracefully.
func Serve(ctx context.Context, getenv func(string) string, stderr io.Writer, hooks Hooks) error {
	logger := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{ReplaceAttr: utcTime}))

	if hooks.Environ != nil {
		warnUnknownVars(hooks.Environ(), getenv, logger)
	}
	cfg, err := loadConfig(getenv)
	if err != nil {
		return err
	}
	tuneGC(getenv, logger)
	keyFile, err := secretfile.Read(cfg.cursorKeyFile)
	if err != nil {
		return fmt.Errorf("cursor key: %w", err)
	}
	cursors, err := cursor.ParseKeys(keyFile)
	if err != nil {
		return fmt.Errorf("cursor key file %s: %w", cfg.cursorKeyFile, err)
	}
	if ranges := server.TrustedRanges(cfg.trustedProxies); len(ranges) > 0 {
		logger.Warn("HEYAIRA_TRUSTED_PROXIES holds ranges, not only proxy addresses: a client inside one can choose the address its limits are charged to; list each proxy's own address",
			"ranges", ranges)
	}
	// Key ids are not secret (cursor package doc): they show which key signs.
	logger.Info("cursor keys", "key_ids", cursors.KeyIDs())
	cimd, err := server.NewCIMD(cfg.cimdClients, hooks.CIMDDial, hooks.CIMDRoots)
	if err != nil {
		return err
	}
	meters := metrics.New()
	gc, health := githubConfig(cfg, hooks, logger)
	gc.OnRequest = func(route string, status int, d time.Duration) {
		meters.GitHubRequest(route, status, d)
		health.observe(route, status)
	}
	gc.OnMint = meters.TokenMint
	gh := github.NewClient(gc)

	db, err := openStore(ctx, cfg.databaseURL, cfg.dbWait, logger)
	if errors.Is(err, errStoppedWaiting) {
		return nil // SIGTERM before the database answered: a clean stop
	}
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxConns(cfg.dbMaxConns)

	janitorCtx, stopJanitor := context.WithCancel(ctx)
	var janitorDone sync.WaitGroup
	janitorDone.Go(func() { janitor(janitorCtx, purgeEvery, purgeRound(db, logger, purgeEvery, purgeKeep)) })
	defer func() { stopJanitor(); janitorDone.Wait() }() // before db.Close

	draining := &atomic.Bool{}
	scfg := server.Config{
		Draining:       draining,
		PublicURL:      cfg.publicURL,
		AllowedOrigins: cfg.allowedOrigins,
		TrustedProxies: cfg.trustedProxies,
		GitHubInFlight: cfg.githubInFlight,
		Replicas:       cfg.replicas,
		Version:        buildVersion(),
		Metrics:        meters,
		MetricsOnMain:  cfg.metricsPublic,
		CIMD:           cimd,
		GitHubProblem:  health.problem,
	}
	if hooks.Tune != nil {
		hooks.Tune(&scfg)
	}
	handler := server.NewServer(logger, scfg, db, gh, cursors)
	if cfg.metricsAddr != "" {
		stop, err := serveMetrics(cfg.metricsAddr, meters, logger)
		if err != nil {
			return err
		}
		defer stop()
	}

	ln := hooks.Listener
	if ln == nil {
		if ln, err = net.Listen("tcp", cfg.listenAddr); err != nil {
			return err
		}
	}
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    32 << 10,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	logger.Info("listening", "addr", ln.Addr().String(), "public_url", cfg.publicURL, "version", buildVersion())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	// Drain: /readyz fails at once, new requests are still served for the
	// drain delay (while the load balancer notices), then the listener
	// closes and in-flight requests get up to ShutdownGrace to finish.
	draining.Store(true)
	logger.Info("draining", "delay", cfg.drainDelay.String())
	time.Sleep(cfg.drainDelay)
	logger.Info("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), ShutdownGrace)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}

// utcTime writes log times in UTC, whatever the host's zone, so that lines
// from several replicas sort and compare (docs/security-tests.md, LG-03).
func utcTime(groups []string, a slog.Attr) slog.Attr {
	if a.Key == slog.TimeKey && len(groups) == 0 && a.Value.Kind() == slog.KindTime {
		a.Value = slog.TimeValue(a.Value.Time().UTC())
	}
	return a
}

// serveMetrics serves /metrics alone on addr, for operators who keep it off
// the public listener. The returned function stops it.
func serveMetrics(addr string, m *metrics.Metrics, logger *slog.Logger) (func(), error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics listener: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", metrics.Handler(m))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second,
		WriteTimeout: 10 * time.Second, IdleTimeout: 60 * time.Second}
	go srv.Serve(ln)
	logger.Info("metrics listening", "addr", ln.Addr().String())
	return func() { srv.Close() }, nil
}
