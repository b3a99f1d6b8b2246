// Package admin is the administrator's command-line interface:
// `heyaira-admin <command> [flags]`, or `heyaira admin <command> [flags]`.
//
// It is the only way to change a project's tenant tree, its repository links,
// its document allowlist, its account's instruction sources and its
// credentials: there is no model-facing write path to any of them.
//
// Guarantees, for a reviewer:
//   - Every command parses and validates all of its input before it opens the
//     database, so input that breaks a rule of docs/design.md §5 writes nothing.
//     Rules that need the database (an unknown project, a repository that is
//     not linked) are checked inside the store transaction that would make the
//     change, which then rolls back: a refused command leaves no row anywhere,
//     audit log included.
//   - Every accepted change writes exactly one audit_events row, in the same
//     transaction as the change (package store does both).
//   - Secrets (legacy tokens, sign-in links) are made and hashed by
//     oauth.NewSecret and oauth.Hash, as every secret the server checks, so
//     one definition decides what it accepts; each is printed once on stdout
//     and handed to the store only as its hash.
//
// Exit status (app.ExitCode): nil, or flag.ErrHelp (help went to stdout) → 0;
// an error wrapping ErrUsage → 2 (Run printed the reason on stderr); any
// other → 1, printed by main as "heyaira-admin: <error>" on one line.
package admin

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"heyaira/internal/nearest"
	"heyaira/store"
)

// ErrUsage is wrapped by every error caused by the command line itself: an
// unknown command or flag, a missing or malformed value (exit status 2).
var ErrUsage = errors.New("usage")

// Command describes one admin command, for help output and for the README
// and docs tests that check the command reference against this table.
type Command struct {
	Name  string                // the command word, e.g. "add-member"
	Usage string                // the synopsis with every flag, e.g. "heyaira-admin add-member --project-id P --principal-id U"
	Short string                // one line saying what it does
	run   func(f *flags) action // declares the flags and their checks
}

// action is what a command does once its whole command line has passed its
// checks and the database is open (exec).
type action func(ctx context.Context, db *store.DB) error

// commands is the table, in the order of docs/design.md §5 (the order help prints).
var commands = []Command{
	{"migrate", "heyaira-admin migrate",
		"apply schema.sql (idempotent, one transaction)", runMigrate},
	{"create-account", "heyaira-admin create-account --name N",
		"create an account", runCreateAccount},
	{"create-project", "heyaira-admin create-project --account-id A --name N",
		"create a project in an account", runCreateProject},
	{"create-principal", "heyaira-admin create-principal --account-id A --name N",
		"create a principal (a person who signs in) in an account", runCreatePrincipal},
	{"add-member", "heyaira-admin add-member --project-id P --principal-id U",
		"make a principal a member of a project of the same account", runAddMember},
	{"signin-link", "heyaira-admin signin-link --principal-id U",
		"print a one-time sign-in URL for a principal, valid 15 minutes", runSigninLink},
	{"remove-member", "heyaira-admin remove-member --project-id P --principal-id U",
		"end a principal's membership of a project, revoking its grants and tokens there", runRemoveMember},
	{"disable-principal", "heyaira-admin disable-principal --principal-id U",
		"offboard a principal: refuse sign-in, revoke its grants, tokens, sessions and sign-in links", runDisablePrincipal},
	{"enable-principal", "heyaira-admin enable-principal --principal-id U",
		"let a disabled principal sign in again (revoked grants stay revoked)", runEnablePrincipal},
	{"revoke-sessions", "heyaira-admin revoke-sessions --principal-id U",
		"end every browser session of a principal", runRevokeSessions},
	{"list-accounts", "heyaira-admin list-accounts",
		"list every account", runListAccounts},
	{"list-projects", "heyaira-admin list-projects [--account-id A]",
		"list projects, all or one account's", runListProjects},
	{"list-principals", "heyaira-admin list-principals --account-id A",
		"list an account's principals, their projects and whether they are disabled", runListPrincipals},
	{"list-members", "heyaira-admin list-members --project-id P",
		"list a project's members", runListMembers},
	{"link-repository", "heyaira-admin link-repository --project-id P --github-owner O --github-repository R --github-installation-id I [--github-repository-id N]",
		"link a GitHub repository to a project", runLinkRepository},
	{"unlink-repository", "heyaira-admin unlink-repository --project-id P --github-owner O --github-repository R",
		"revoke a project's link to a GitHub repository", runUnlinkRepository},
	{"add-document-source", "heyaira-admin add-document-source --project-id P --github-owner O --github-repository R --document-role runtime|reference|instruction --path PATH (--commit-sha SHA40 | --track BRANCH) [--profile NAME] [--fragment-limit BYTES] [--skip-github-check]",
		"allowlist a document of a linked repository", runAddDocumentSource},
	{"revoke-document-source", "heyaira-admin revoke-document-source --source-id S",
		"revoke an allowlisted document", runRevokeDocumentSource},
	{"list-document-sources", "heyaira-admin list-document-sources --project-id P",
		"list a project's repository links and document sources", runListDocumentSources},
	{"add-account-source", "heyaira-admin add-account-source --account-id A --github-owner O --github-repository R --github-installation-id I --layer core|mode:worker|mode:verifier --path docs/agents/PATH (--track BRANCH | --commit-sha SHA40)",
		"add an account-wide instruction source under docs/agents/", runAddAccountSource},
	{"revoke-account-source", "heyaira-admin revoke-account-source --source-id S",
		"revoke an account instruction source", runRevokeAccountSource},
	{"list-account-sources", "heyaira-admin list-account-sources --account-id A",
		"list an account's instruction sources", runListAccountSources},
	{"issue-legacy-token", "heyaira-admin issue-legacy-token --project-id P --name N [--expires-in DURATION]",
		"issue a static project token with memory/task scopes only, printed once", runIssueLegacyToken},
	{"list-legacy-reissue", "heyaira-admin list-legacy-reissue",
		"list the live legacy tokens issued before tokens were signed, which must be issued again", runListLegacyReissue},
	{"list-grants", "heyaira-admin list-grants --project-id P",
		"list a project's OAuth grants, their active tokens and its legacy tokens", runListGrants},
	{"revoke-grant", "heyaira-admin revoke-grant --grant-id G",
		"revoke an OAuth grant and every token issued under it", runRevokeGrant},
	{"revoke-token", "heyaira-admin revoke-token (--token-id T | --legacy-token-id L)",
		"revoke an OAuth token (a refresh token with its whole family) or a legacy token", runRevokeToken},
	{"audit", "heyaira-admin audit (--project-id P | --account-id A) [--since RFC3339] [--limit N]",
		"print the audit log of a project or an account, oldest first", runAudit},
	{"prune-audit", "heyaira-admin prune-audit --before DATE (--export FILE | --dry-run)",
		"export the audit rows older than a date as JSON lines, then delete exactly those", runPruneAudit},
	{"audit-stats", "heyaira-admin audit-stats",
		"show how many audit rows there are, how old, how large, and the last prune", runAuditStats},
	{"set-project-limits", "heyaira-admin set-project-limits --project-id P [--github-requests-per-hour N] [--memory-entries N] [--memory-bytes N] [--tasks N] [--workflows N]",
		"set a project's GitHub request budget and storage quotas", runSetProjectLimits},
	{"project-usage", "heyaira-admin project-usage --project-id P",
		"show what a project stores beside its limits", runProjectUsage},
}

// Run runs the command args[0]; schema is the embedded schema.sql. It reads
// the environment through getenv only. Its lines on stderr start "heyaira-admin:".
func Run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer, schema string) error {
	return RunAs(ctx, "heyaira-admin", args, getenv, stdout, stderr, schema)
}

// RunAs is Run under another program name, which starts each line it prints
// on stderr (`heyaira admin` is "heyaira", as main's own line).
func RunAs(ctx context.Context, prog string, args []string, getenv func(string) string, stdout, stderr io.Writer, schema string) error {
	return run(ctx, &env{prog: prog, getenv: getenv, stdout: stdout, stderr: stderr, schema: schema}, args)
}

func run(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 {
		printTable(e.stderr)
		return ErrUsage
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		if len(args) > 1 {
			if c, ok := lookup(args[1]); ok {
				e.cmd = c
				return e.exec(ctx, []string{"--help"})
			}
		}
		printTable(e.stdout)
		return flag.ErrHelp
	}
	c, ok := lookup(args[0])
	if !ok {
		var names []string
		for _, c := range commands {
			names = append(names, c.Name)
		}
		hint := ""
		if near := nearest.Name(args[0], names); near != "" {
			hint = "; did you mean " + near + "?"
		}
		fmt.Fprintf(e.stderr, "%s: unknown command %q%s (%s help lists the commands)\n", e.prog, args[0], hint, e.prog)
		return fmt.Errorf("unknown command %q: %w", args[0], ErrUsage)
	}
	e.cmd = c
	err := e.exec(ctx, args[1:])
	var ce *cmdError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
	case !errors.As(err, &ce):
		// An error from the store, from opening it, or from a check of the
		// environment: the input was accepted.
		err = failed(c.Name, err)
	case errors.Is(err, ErrUsage):
		// main prints nothing for usage errors, so the reason is printed here, once.
		fmt.Fprintf(e.stderr, "%s: %s\n", e.prog, ce.Error())
	}
	return err
}

// exec runs e.cmd in the order that the package's first guarantee needs:
// flags declared, args parsed and checked, environment checked, and only
// then the database opened (without the schema check for migrate, which
// applies it) and the action run.
func (e *env) exec(ctx context.Context, args []string) error {
	// Parse errors are not printed by the flag package: parse reports them as one line.
	f := &flags{FlagSet: flag.NewFlagSet(e.cmd.Name, flag.ContinueOnError), e: e}
	f.SetOutput(io.Discard)
	f.json = f.Bool("json", false, "print the result as JSON on stdout")
	act := e.cmd.run(f)
	if err := f.parse(args); err != nil {
		return err
	}
	for _, check := range f.beforeOpen {
		if err := check(); err != nil {
			return err
		}
	}
	db, err := e.open(ctx, e.cmd.Name == "migrate")
	if err != nil {
		return err
	}
	defer db.Close()
	return act(ctx, db)
}

func lookup(name string) (Command, bool) {
	for _, c := range commands {
		if c.Name == name {
			return c, true
		}
	}
	return Command{}, false
}

func printTable(w io.Writer) {
	fmt.Fprintf(w, "usage: heyaira-admin <command> [flags]   (or: heyaira admin <command> [flags])\n\ncommands:\n")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-24s %s\n", c.Name, c.Short)
	}
	fmt.Fprintf(w, "\nEvery command accepts --json and --help. Run heyaira-admin <command> --help for its flags.\n")
}

// env is what a command may use: injected I/O and configuration.
type env struct {
	prog   string // starts each line on stderr
	cmd    Command
	getenv func(string) string
	stdout io.Writer
	stderr io.Writer
	schema string
	gh     githubHooks
}

// open connects to HEYAIRA_DATABASE_URL and, unless migrating, checks the
// schema, so that a fresh database gives a clear hint.
func (e *env) open(ctx context.Context, migrating bool) (*store.DB, error) {
	dsn := e.getenv("HEYAIRA_DATABASE_URL")
	if dsn == "" {
		return nil, errors.New("HEYAIRA_DATABASE_URL is not set")
	}
	db, err := store.Open(ctx, dsn)
	if err != nil {
		return nil, err
	}
	if !migrating {
		if err := db.CheckSchema(ctx); err != nil {
			db.Close()
			return nil, err
		}
	}
	return db, nil
}

// cmdError is a command's one-line reason for failing. It wraps ErrUsage
// when the command line is wrong, else the error of the accepted command (a
// rule that needs the database refused it, or the database did not answer).
type cmdError struct {
	cmd string
	msg string
	err error
}

func (e *cmdError) Error() string { return e.cmd + ": " + e.msg }
func (e *cmdError) Unwrap() error { return e.err }

// failed turns an error from the store (or from opening it) into a one-line
// reason prefixed with the command name.
func failed(cmd string, err error) error {
	var refused *store.RefusedError
	msg := err.Error()
	switch {
	case errors.As(err, &refused):
		msg = refused.Msg
	case errors.Is(err, store.ErrSchemaMissing):
		msg = "database schema missing: run heyaira-admin migrate"
	case errors.Is(err, store.ErrUnavailable):
		if oe, ok := errors.AsType[*store.OpError](err); ok {
			msg = oe.Cause.Error()
		}
		msg = "database unavailable: " + msg
	}
	// One line, whatever the driver said.
	return &cmdError{cmd: cmd, msg: strings.Join(strings.Fields(msg), " "), err: err}
}
