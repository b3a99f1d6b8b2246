package admin

import (
	"context"
	"io"

	"heyaira/github/githubtest"
)

// Test-only exports for the external test package admin_test.

// Commands returns the command table (name, usage line, short help), in the
// order help prints it. Every command also accepts --json and --help.
func Commands() []Command {
	out := make([]Command, len(commands))
	copy(out, commands)
	return out
}

// RunWithGitHub is Run with add-document-source's check pointed at the fake
// GitHub gh (its URL, HTTP client and clock) instead of api.github.com.
func RunWithGitHub(ctx context.Context, gh *githubtest.Server, args []string, getenv func(string) string, stdout, stderr io.Writer, schema string) error {
	e := &env{prog: "heyaira-admin", getenv: getenv, stdout: stdout, stderr: stderr, schema: schema,
		gh: githubHooks{baseURL: gh.URL(), http: gh.HTTPClient(), now: gh.Clock().Now}}
	return run(ctx, e, args)
}
