// Command heyaira-demo is the demo's server: scripts/dev builds and runs it
// when no GitHub App is configured, so that a new user can read documents
// without a GitHub account. It starts the GitHub stand-in (github/githubtest,
// the fake the tests use) with its sample repository, and then is `heyaira
// serve` pointed at it.
//
// Why a program of its own: the GitHub base URL never comes from
// configuration (docs/design.md §10), so the production binary cannot be
// pointed anywhere but api.github.com; only Go code can, through app.Hooks.
// The production binary does not link the stand-in (TestDependencies), and
// TestDemoProductionBinaryReachesOnlyGitHub shows that, given every variable
// this program reads, it still asks only for api.github.com.
//
// scripts/dev hands over HEYAIRA_DEMO_SEED_FILE (where writeSeed puts what
// the stand-in serves) and the server's ordinary HEYAIRA_* configuration, but
// for the GitHub App: the stand-in's own is used. Everything else is the
// production path: app.Serve, the real store, the real GitHub client (App
// JWT, installation tokens, strict decoding).
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"heyaira/github/githubtest"
	"heyaira/internal/app"
)

func main() {
	if err := demo(); err != nil {
		fmt.Fprintf(os.Stderr, "heyaira-demo: %v\n", err)
		os.Exit(1)
	}
}

func demo() error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()

	gh := githubtest.Start()
	defer gh.Close()
	gh.SeedDemo()
	// The stand-in's clock is manual (tests move it); the demo follows the
	// wall clock, so that App JWTs and installation tokens stay valid.
	defer gh.Clock().FollowWallClock()()

	dir, err := os.MkdirTemp("", "heyaira-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	keyFile := filepath.Join(dir, "demo-app.pem")
	if err := os.WriteFile(keyFile, githubtest.KeyPEM(), 0o600); err != nil {
		return err
	}
	if err := writeSeed(os.Getenv("HEYAIRA_DEMO_SEED_FILE"), gh); err != nil {
		return err
	}
	getenv := func(k string) string {
		switch k {
		case "HEYAIRA_GITHUB_APP_ID":
			return githubtest.AppID
		case "HEYAIRA_GITHUB_APP_PRIVATE_KEY_FILE":
			return keyFile
		}
		return os.Getenv(k)
	}
	hooks := app.Hooks{GitHubBaseURL: gh.URL(), GitHubHTTP: gh.HTTPClient(), GitHubNow: gh.Clock().Now}
	return app.Serve(ctx, getenv, os.Stderr, hooks)
}

// writeSeed writes what scripts/dev needs to link the repository and
// allowlist its documents with the admin CLI.
func writeSeed(path string, gh *githubtest.Server) error {
	if path == "" {
		return fmt.Errorf("HEYAIRA_DEMO_SEED_FILE is not set")
	}
	lines := []string{
		"DEMO_GITHUB_OWNER=" + githubtest.DemoOwner,
		"DEMO_GITHUB_REPOSITORY=" + githubtest.DemoRepo,
		"DEMO_GITHUB_INSTALLATION_ID=" + strconv.FormatInt(gh.Binding(githubtest.DemoOwner, githubtest.DemoRepo).InstallationID, 10),
		"DEMO_COMMIT_SHA=" + githubtest.DemoCommit,
		"DEMO_BRANCH=" + githubtest.DemoBranch,
		"DEMO_RUNTIME_PATH=" + githubtest.DemoRuntime,
		"DEMO_GUIDE_PATH=" + githubtest.DemoGuide,
		"DEMO_CORE_PATH=" + githubtest.DemoCore,
		"DEMO_WORKER_PATH=" + githubtest.DemoWorker,
		"DEMO_VERIFIER_PATH=" + githubtest.DemoVerifier,
		"DEMO_ENGINEER_PATH=" + githubtest.DemoEngineer,
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path) // scripts/dev waits for the whole file
}
