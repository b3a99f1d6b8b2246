// Command heyaira serves the Model Context Protocol over HTTP to AI agents and,
// invoked as heyaira-admin (or `heyaira admin`), is the administrator's CLI.
//
// See README.md for the set-up, the configuration and the security model.
package main

import (
	"context"
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"heyaira/admin"
)

//go:embed schema.sql
var schemaSQL string

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args, os.Getenv, os.Stdin, os.Stdout, os.Stderr)
	stop()
	code := exitCode(err)
	if code == 1 {
		fmt.Fprintf(os.Stderr, "%s: %v\n", programName(os.Args), err)
	}
	os.Exit(code)
}

// exitCode is the one exit-status rule of both programs: 0 on success and
// when help was asked for (it went to stdout); 2 for a usage error (the
// reason and the usage went to stderr); 1 for any other failure.
func exitCode(err error) int {
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage), errors.Is(err, admin.ErrUsage):
		return 2
	}
	return 1
}
