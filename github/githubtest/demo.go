package githubtest

// The sample repository of the demo (internal/demo, run by scripts/dev when
// no GitHub App is configured), here so that the demo program and the tests
// of scripts/dev share it.

import (
	"fmt"
	"strings"
)

// The sample repository. Every file is at DemoCommit; branch DemoBranch
// points at it, so the instruction files can be tracked.
const (
	DemoOwner    = "heyaira-demo"
	DemoRepo     = "handbook"
	DemoCommit   = "5a0c1f7e2b9d4c3a8e6f0b1d2c3e4f5a6b7c8d9e"
	DemoBranch   = "main"
	DemoRuntime  = "RUNTIME.md"
	DemoGuide    = "guides/field-guide.md"
	DemoCore     = "docs/agents/core.md"
	DemoWorker   = "docs/agents/worker.md"
	DemoVerifier = "docs/agents/verifier.md"
	DemoEngineer = "docs/agents/engineer.md"
)

// SeedDemo puts the demo's sample repository into the fake: a runtime
// document, a UTF-8 guide of several 64 KB fragments, and instruction files
// under docs/agents/ on a branch: the account's core and both modes (so a
// dispatch misses no layer) and the engineer's role instructions.
func (gh *Server) SeedDemo() {
	gh.AddFile(DemoOwner, DemoRepo, DemoCommit, DemoRuntime, []byte(demoRuntimeText))
	gh.AddFile(DemoOwner, DemoRepo, DemoCommit, DemoGuide, DemoGuideText())
	gh.AddFile(DemoOwner, DemoRepo, DemoCommit, DemoCore, []byte(demoCoreText))
	gh.AddFile(DemoOwner, DemoRepo, DemoCommit, DemoWorker, []byte(demoWorkerText))
	gh.AddFile(DemoOwner, DemoRepo, DemoCommit, DemoVerifier, []byte(demoVerifierText))
	gh.AddFile(DemoOwner, DemoRepo, DemoCommit, DemoEngineer, []byte(demoEngineerText))
	gh.SetBranch(DemoOwner, DemoRepo, DemoBranch, DemoCommit)
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

const demoWorkerText = `# Worker mode (demo)

You do the task: change what it asks, test it, and report what you changed.
`

const demoVerifierText = `# Verifier mode (demo)

You check another's work: run its tests, read its change, and say what is wrong.
`

const demoEngineerText = `# Engineer instructions (demo)

Make the smallest change that solves the task, with a test that fails without it.
`

// DemoGuideText is about 150 KB of UTF-8 with 1- to 4-byte characters, so
// that a read takes three fragments and the fragment ends fall beside
// multi-byte characters.
func DemoGuideText() []byte {
	var b strings.Builder
	b.WriteString("# Field guide (demo)\n\n")
	for i := 1; b.Len() < 150_000; i++ {
		fmt.Fprintf(&b, "## Section %d\n\nPlain ASCII, Ünïcödé, 日本語のテキスト, and emoji 📄🔒✅ in every line.\n\n", i)
	}
	return []byte(b.String())
}
