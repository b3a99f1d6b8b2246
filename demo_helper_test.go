package main

// The demo's server: scripts/dev runs it when no GitHub App is configured, so
// that a new user can read documents without a GitHub account. scripts/dev
// builds this test binary (`go test -c`) and runs it with
// -test.run=^TestDemoHelperProcess$ and HEYAIRA_DEMO_HELPER=1; this test then
// starts the GitHub stand-in (github/githubtest, the same fake the tests
// use) with the sample repository below, and becomes `heyaira serve` pointed
// at it.
//
// Why a test binary: the GitHub base URL never comes from configuration
// (docs/design.md §10), so the production binary cannot be pointed anywhere
// but api.github.com. Only Go code can, through serveHooks, and this file,
// being a _test.go file, is linked into the test binary alone. `go build .`
// never contains it; TestDemoProductionBinaryReachesOnlyGitHub starts the
// production binary with every variable this file reads and shows that it
// still asks only for api.github.com.
//
// What scripts/dev hands over:
//
//	HEYAIRA_DEMO_HELPER=1        be the demo server (otherwise: skip)
//	HEYAIRA_DEMO_SEED_FILE       where to write what the stand-in serves, as
//	                             KEY=value lines for the admin CLI (see demoSeed)
//	HEYAIRA_* as in README.md    the server's ordinary configuration, except the
//	                             GitHub App: the stand-in's own App is used
//
// Everything else is the production path: serve, the real store, the real
// GitHub client (App JWT, installation tokens, strict decoding) against a
// server that speaks GitHub's API.

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"heyaira/github/githubtest"
)

const demoHelperEnv = "HEYAIRA_DEMO_HELPER"

// The sample repository. Every file is at demoCommit; branch demoBranch
// points at it, so the instruction files can be tracked.
const (
	demoOwner    = "heyaira-demo"
	demoRepo     = "handbook"
	demoCommit   = "5a0c1f7e2b9d4c3a8e6f0b1d2c3e4f5a6b7c8d9e"
	demoBranch   = "main"
	demoRuntime  = "RUNTIME.md"
	demoGuide    = "guides/field-guide.md"
	demoCore     = "docs/agents/core.md"
	demoEngineer = "docs/agents/engineer.md"
)

// TestDemoHelperProcess is not a test: see the comment at the top of the file.
func TestDemoHelperProcess(t *testing.T) {
	if os.Getenv(demoHelperEnv) != "1" {
		t.Skip("not a test: the demo server, run only by scripts/dev with " + demoHelperEnv + "=1")
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()

	gh := githubtest.New(t)
	seedDemo(gh)
	// The stand-in's clock is manual (tests move it); the demo follows the
	// wall clock, so that App JWTs and installation tokens stay valid.
	defer followWallClock(gh)()

	dir := t.TempDir()
	keyFile := filepath.Join(dir, "demo-app.pem")
	if err := os.WriteFile(keyFile, githubtest.KeyPEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := writeDemoSeed(os.Getenv("HEYAIRA_DEMO_SEED_FILE"), gh); err != nil {
		t.Fatal(err)
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
	if err := serve(ctx, getenv, os.Stderr, fakeGitHub(gh)); err != nil {
		t.Fatalf("serve: %v", err)
	}
}

// seedDemo puts the sample repository into the stand-in: a runtime
// document, a UTF-8 guide of several 64 KB fragments, and two instruction
// files under docs/agents/ on a branch.
func seedDemo(gh *githubtest.Server) {
	gh.AddFile(demoOwner, demoRepo, demoCommit, demoRuntime, []byte(demoRuntimeText))
	gh.AddFile(demoOwner, demoRepo, demoCommit, demoGuide, demoGuideText())
	gh.AddFile(demoOwner, demoRepo, demoCommit, demoCore, []byte(demoCoreText))
	gh.AddFile(demoOwner, demoRepo, demoCommit, demoEngineer, []byte(demoEngineerText))
	gh.SetBranch(demoOwner, demoRepo, demoBranch, demoCommit)
}

// writeDemoSeed writes what scripts/dev needs to link the repository and
// allowlist its documents with the admin CLI.
func writeDemoSeed(path string, gh *githubtest.Server) error {
	if path == "" {
		return fmt.Errorf("HEYAIRA_DEMO_SEED_FILE is not set")
	}
	lines := []string{
		"DEMO_GITHUB_OWNER=" + demoOwner,
		"DEMO_GITHUB_REPOSITORY=" + demoRepo,
		"DEMO_GITHUB_INSTALLATION_ID=" + strconv.FormatInt(gh.Binding(demoOwner, demoRepo).InstallationID, 10),
		"DEMO_COMMIT_SHA=" + demoCommit,
		"DEMO_BRANCH=" + demoBranch,
		"DEMO_RUNTIME_PATH=" + demoRuntime,
		"DEMO_GUIDE_PATH=" + demoGuide,
		"DEMO_CORE_PATH=" + demoCore,
		"DEMO_ENGINEER_PATH=" + demoEngineer,
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path) // scripts/dev waits for the whole file
}

const demoRuntimeText = `# Demo runtime protocol

This document was served by the local GitHub stand-in that scripts/dev starts
when no GitHub App is configured. With a real App, the same tool reads the
file your administrator allowlisted, at the commit they pinned.

1. Read this runtime document first (runtime_bootstrap_get).
2. Read the field guide with git_document_get; follow next_cursor until it is absent.
3. Record what you learn with memory_put; track work with task_create.
`

const demoCoreText = `# Core instructions (demo)

You work inside one project. Cite the commit of every document you rely on.
`

const demoEngineerText = `# Engineer instructions (demo)

Make the smallest change that solves the task, with a test that fails without it.
`

// demoGuideText is about 150 KB of UTF-8 with 1- to 4-byte characters, so
// that a read takes three fragments and the fragment ends fall beside
// multi-byte characters.
func demoGuideText() []byte {
	var b strings.Builder
	b.WriteString("# Field guide (demo)\n\n")
	for i := 1; b.Len() < 150_000; i++ {
		fmt.Fprintf(&b, "## Section %d\n\nPlain ASCII, Ünïcödé, 日本語のテキスト, and emoji 📄🔒✅ in every line.\n\n", i)
	}
	return []byte(b.String())
}
