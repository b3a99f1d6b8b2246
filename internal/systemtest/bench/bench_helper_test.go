//go:build bench

package bench

// The server half of the load harness (bench_test.go), in the standard Go
// "helper process" pattern: the harness re-executes this test binary with
// -test.run=^TestServeHelperProcess$ and HEYAIRA_BENCH_HELPER=1, and this
// test becomes `heyaira serve` in a process of its own, so that its CPU, its
// peak RSS (VmHWM) and its heap are the server's alone.
//
// Why not the real binary: the GitHub base URL must never come from
// configuration (docs/design.md §10), so a production binary cannot be pointed at
// the fake. Only Go code can, through app.Hooks; this file is that code, and
// being a _test.go file it exists only in the test binary. Everything else
// is the production path: run → serve → loadConfig from the environment
// (database, cursor key file, App ID and key file, public URL), the real
// store, the real GitHub client with its production timeouts.
//
// What the harness hands over:
//
//	HEYAIRA_BENCH_HELPER=1                 be the server (otherwise: skip)
//	HEYAIRA_BENCH_GITHUB_URL               the fake's base URL (a app.Hooks field)
//	HEYAIRA_BENCH_GITHUB_CA_FILE           PEM of the fake's certificate, the only one trusted
//	fd 3                                   the listener for the server (its port is the public URL's)
//	fd 4                                   a listener for /debug/heap and /debug/pprof/ (this file only)
//	fd 5                                   a listener for the floor of the read path (bench_floor_test.go)
//	HEYAIRA_* as documented in README.md   the server's ordinary configuration

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"runtime"
	"runtime/metrics"
	"syscall"
	"testing"
	"time"

	"heyaira/internal/app"
	"heyaira/server"
	"heyaira/store"
)

const benchHelperEnv = "HEYAIRA_BENCH_HELPER"

// TestServeHelperProcess is not a test: see the comment at the top of the file.
func TestServeHelperProcess(t *testing.T) {
	if os.Getenv(benchHelperEnv) != "1" {
		t.Skip("not a test: the server process of the load harness, run only when bench_test.go re-executes the test binary with " +
			benchHelperEnv + "=1")
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()

	pool := benchFakeRoots(t)
	// The production transport's settings (github.defaultTransport), with
	// the fake's certificate as the only root.
	ghHTTP := &http.Client{Transport: &http.Transport{
		Proxy:                  nil,
		DialContext:            (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSClientConfig:        &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout:    10 * time.Second,
		MaxIdleConns:           64,
		MaxIdleConnsPerHost:    64,
		IdleConnTimeout:        90 * time.Second,
		ExpectContinueTimeout:  time.Second,
		MaxResponseHeaderBytes: 64 << 10,
		DisableCompression:     true,
	}}
	ln, err := net.FileListener(os.NewFile(3, "listener"))
	if err != nil {
		t.Fatal(err)
	}
	debugLn, err := net.FileListener(os.NewFile(4, "debug-listener"))
	if err != nil {
		t.Fatal(err)
	}
	debug := &http.Server{Handler: benchDebugMux(), ReadHeaderTimeout: 5 * time.Second}
	go debug.Serve(debugLn)
	defer debug.Close()
	floorLn, err := net.FileListener(os.NewFile(5, "floor-listener"))
	if err != nil {
		t.Fatal(err)
	}
	floorDB, err := store.Open(ctx, os.Getenv("HEYAIRA_DATABASE_URL"))
	if err != nil {
		t.Fatal(err)
	}
	defer floorDB.Close()
	floor := &http.Server{Handler: benchFloor(floorDB, ghHTTP, os.Getenv("HEYAIRA_BENCH_GITHUB_URL"), os.Getenv("HEYAIRA_PUBLIC_URL")+"/mcp"), ReadHeaderTimeout: 5 * time.Second}
	go floor.Serve(floorLn)
	defer floor.Close()
	defer ghHTTP.CloseIdleConnections()

	// The harness measures the read path of one project at full
	// concurrency, so that project may hold every GitHub slot (by default
	// a project holds a quarter: server/flights.go). Its one-principal
	// phase sends one agent's calls as fast as the server answers them, far
	// above the per-principal tool rate (50/s): the limiter still runs on
	// every call, and is measured, but never refuses.
	hooks := app.Hooks{GitHubBaseURL: os.Getenv("HEYAIRA_BENCH_GITHUB_URL"), GitHubHTTP: ghHTTP, Listener: ln,
		Tune: func(c *server.Config) { c.GitHubProjectShare, c.ToolRate, c.ToolBurst = 64, 1e6, 1e6 }}
	if err := app.Serve(ctx, os.Getenv, os.Stderr, hooks); err != nil {
		t.Fatalf("serve: %v", err)
	}
}

// benchFakeRoots is the fake GitHub's certificate, handed over in
// HEYAIRA_BENCH_GITHUB_CA_FILE, as the only root a helper process trusts.
func benchFakeRoots(t *testing.T) *x509.CertPool {
	ca, err := os.ReadFile(os.Getenv("HEYAIRA_BENCH_GITHUB_CA_FILE"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		t.Fatal("no certificate in HEYAIRA_BENCH_GITHUB_CA_FILE")
	}
	return pool
}

// benchDebugMux serves what the harness measures from inside the server
// process: the live heap, and pprof for profiling under load.
//
// GET /debug/heap answers "live=<bytes> alloc=<bytes> gcs=<n>": live is
// runtime/metrics /gc/heap/live:bytes, the heap the last GC found reachable
// (in-flight requests' buffers included, garbage excluded); alloc is the
// bytes in heap objects (HeapAlloc), garbage not yet collected included.
// With ?gc=1 a GC runs first.
func benchDebugMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /debug/heap", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("gc") == "1" {
			runtime.GC()
		}
		s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/memory/classes/heap/objects:bytes"},
			{Name: "/gc/cycles/total:gc-cycles"}}
		metrics.Read(s) // no stop-the-world, unlike runtime.ReadMemStats
		fmt.Fprintf(w, "live=%d alloc=%d gcs=%d\n", s[0].Value.Uint64(), s[1].Value.Uint64(), s[2].Value.Uint64())
	})
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}
