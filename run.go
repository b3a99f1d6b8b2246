package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"heyaira/admin"
)

// errUsage makes main exit with status 2.
var errUsage = errors.New("usage")

const usage = `usage:
  heyaira serve               run the MCP server (configuration: README.md)
  heyaira admin <command>     administer (same as heyaira-admin <command>)
  heyaira version             print the version
`

// run is the whole program: main only adds signals and exit codes. It is the
// only function that receives the environment, so tests can run it in
// parallel: values come only through getenv; os.Environ gives serve the
// names to warn about, and serve ignores a name getenv does not see.
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		args = []string{"heyaira"}
	}
	if programName(args) == "heyaira-admin" {
		return admin.Run(ctx, args[1:], getenv, stdout, stderr, schemaSQL)
	}
	if len(args) < 2 {
		fmt.Fprint(stderr, usage)
		return errUsage
	}
	switch args[1] {
	case "serve":
		if len(args) > 2 {
			fmt.Fprintf(stderr, "serve takes no arguments; it is configured by the environment\n%s", usage)
			return errUsage
		}
		// os.Environ only lists names for the unknown-variable warning;
		// every value is still read through getenv.
		return serve(ctx, getenv, stderr, serveHooks{environ: os.Environ})
	case "admin":
		return admin.RunAs(ctx, "heyaira", args[2:], getenv, stdout, stderr, schemaSQL)
	case "version":
		fmt.Fprintf(stdout, "heyaira %s\n", buildVersion())
		return nil
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return nil
	default:
		fmt.Fprintf(stderr, "unknown command %q\n%s", args[1], usage)
		return errUsage
	}
}

// programName is the base name the binary was invoked as.
func programName(args []string) string {
	if len(args) == 0 {
		return "heyaira"
	}
	return strings.TrimSuffix(filepath.Base(args[0]), ".exe")
}
