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
	switch {
	case err == nil:
	case errors.Is(err, errUsage), errors.Is(err, admin.ErrUsage), errors.Is(err, flag.ErrHelp):
		os.Exit(2)
	default:
		fmt.Fprintf(os.Stderr, "%s: %v\n", programName(os.Args), err)
		os.Exit(1)
	}
}
