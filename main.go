// Command heyaira serves the Model Context Protocol over HTTP to AI agents and,
// invoked as heyaira-admin (or `heyaira admin`), is the administrator's CLI.
//
// See README.md for the set-up, the configuration and the security model.
// The program itself is internal/app; this file adds the process: signals,
// the database schema it embeds, and the exit status.
package main

import (
	"context"
	_ "embed"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"heyaira/internal/app"
)

//go:embed schema.sql
var schemaSQL string

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := app.Run(ctx, os.Args, os.Getenv, os.Stdin, os.Stdout, os.Stderr, schemaSQL)
	stop()
	code := app.ExitCode(err)
	if code == 1 {
		fmt.Fprintf(os.Stderr, "%s: %v\n", app.ProgramName(os.Args), err)
	}
	os.Exit(code)
}
