package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"heyaira/admin"
)

// errUsage makes ExitCode 2.
var errUsage = errors.New("usage")

const usage = `usage:
  heyaira serve               run the MCP server (configuration: README.md)
  heyaira admin <command>     administer (same as heyaira-admin <command>)
  heyaira version             print the version
`

// Run is the whole program: main only adds signals, the schema it embeds and
// exit codes. Values of the environment come only through getenv, so tests
// can run it in parallel (os.Environ gives Serve only names to warn about).
func Run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer,
	schemaSQL string) error {
	if ProgramName(args) == "heyaira-admin" {
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
		return Serve(ctx, getenv, stderr, Hooks{Environ: os.Environ})
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

// ProgramName is the base name the binary was invoked as.
func ProgramName(args []string) string {
	if len(args) == 0 {
		return "heyaira"
	}
	return strings.TrimSuffix(filepath.Base(args[0]), ".exe")
}

// ExitCode is the one exit-status rule of both programs: 0 on success and
// when help was asked for (it went to stdout); 2 for a usage error (the
// reason and the usage went to stderr); 1 for any other failure.
func ExitCode(err error) int {
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage), errors.Is(err, admin.ErrUsage):
		return 2
	}
	return 1
}
