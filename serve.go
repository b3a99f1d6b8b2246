package main

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"heyaira/cursor"
	"heyaira/github"
	"heyaira/server"
)

// serveHooks lets tests (Go code only, never configuration) point the server at
// a fake GitHub and hand it a listener whose port they already know. run
// passes none; tests call serve with their own.
type serveHooks struct {
	githubBaseURL string
	githubHTTP    *http.Client
	githubTimeout time.Duration // 0: github.DefaultTimeout
	// githubNow is the clock of App JWTs and token expiry (nil: the wall
	// clock). A fake GitHub whose clock tests move must share it, or a JWT
	// signed by the wall clock is refused once the fake's clock lags.
	githubNow func() time.Time
	listener  net.Listener
	tune      func(*server.Config) // changes the server's configuration (the load harness)
	// cimdDial and cimdRoots reach a local TLS stand-in for the hosts of
	// client ID metadata documents; nil in production.
	cimdDial  func(ctx context.Context, network, addr string) (net.Conn, error)
	cimdRoots *x509.CertPool
	// environ lists the process environment (run passes os.Environ), for the
	// warning on unknown HEYAIRA_* names; nil: no such check.
	environ func() []string
}

// shutdownGrace bounds how long in-flight requests may take after the
// listener closes (a 1 MiB read takes milliseconds; GitHub calls time out
// sooner than this).
const shutdownGrace = 20 * time.Second

// serve runs the HTTP server until ctx is done, then shuts down gracefully.
func serve(ctx context.Context, getenv func(string) string, stderr io.Writer, hooks serveHooks) error {
	logger := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{ReplaceAttr: utcTime}))

	if hooks.environ != nil {
		warnUnknownVars(hooks.environ(), getenv, logger)
	}
	cfg, err := loadConfig(getenv)
	if err != nil {
		return err
	}
	tuneGC(getenv, logger)
	keyFile, err := readProtectedFile(cfg.cursorKeyFile)
	if err != nil {
		return fmt.Errorf("cursor key: %w", err)
	}
	cursors, err := cursor.ParseKeys(keyFile)
	if err != nil {
		return fmt.Errorf("cursor key file %s: %w", cfg.cursorKeyFile, err)
	}
	// Key ids are not secret (cursor package doc): they show which key signs.
	if ranges := server.TrustedRanges(cfg.trustedProxies); len(ranges) > 0 {
		logger.Warn("HEYAIRA_TRUSTED_PROXIES holds ranges, not only proxy addresses: a client inside one can choose the address its limits are charged to; list each proxy's own address",
			"ranges", ranges)
	}
	logger.Info("cursor keys", "key_ids", cursors.KeyIDs())
	cimd, err := server.NewCIMD(cfg.cimdHosts, hooks.cimdDial, hooks.cimdRoots)
	if err != nil {
		return err
	}
	metrics := server.NewMetrics()
	gc, health := githubConfig(cfg, hooks, logger)
	gc.OnRequest = func(route string, status int, d time.Duration) {
		metrics.GitHubRequest(route, status, d)
		health.observe(route, status)
	}
	gc.OnMint = metrics.TokenMint
	gh := github.NewClient(gc)

	db, err := openStore(ctx, cfg.databaseURL, cfg.dbWait, logger)
	if errors.Is(err, errStoppedWaiting) {
		return nil // SIGTERM before the database answered: a clean stop
	}
	if err != nil {
		return err
	}
	defer db.Close()

	janitorCtx, stopJanitor := context.WithCancel(ctx)
	janitorDone := make(chan struct{})
	go func() {
		defer close(janitorDone)
		janitor(janitorCtx, purgeEvery, purgeRound(db, logger, purgeEvery, purgeKeep))
	}()
	defer func() { stopJanitor(); <-janitorDone }() // before db.Close

	draining := &atomic.Bool{}
	scfg := server.Config{
		Draining:       draining,
		PublicURL:      cfg.publicURL,
		AllowedOrigins: cfg.allowedOrigins,
		TrustedProxies: cfg.trustedProxies,
		GitHubInFlight: cfg.githubInFlight,
		Replicas:       cfg.replicas,
		Version:        buildVersion(),
		Metrics:        metrics,
		MetricsOnMain:  cfg.metricsPublic,
		CIMD:           cimd,
		GitHubProblem:  health.problem,
	}
	if hooks.tune != nil {
		hooks.tune(&scfg)
	}
	handler := server.NewServer(logger, scfg, db, gh, cursors)
	if cfg.metricsAddr != "" {
		stop, err := serveMetrics(cfg.metricsAddr, metrics, logger)
		if err != nil {
			return err
		}
		defer stop()
	}

	ln := hooks.listener
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
	// closes and in-flight requests get up to shutdownGrace to finish.
	draining.Store(true)
	logger.Info("draining", "delay", cfg.drainDelay.String())
	time.Sleep(cfg.drainDelay)
	logger.Info("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
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
func serveMetrics(addr string, m *server.Metrics, logger *slog.Logger) (func(), error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics listener: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", server.MetricsHandler(m))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second,
		WriteTimeout: 10 * time.Second, IdleTimeout: 60 * time.Second}
	go srv.Serve(ln)
	logger.Info("metrics listening", "addr", ln.Addr().String())
	return func() { srv.Close() }, nil
}
