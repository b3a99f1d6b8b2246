package admin

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"
	"unicode/utf8"

	"heyaira/github"
	"heyaira/internal/nearest"
	"heyaira/store"
)

// This file holds what every command shares: its flag set, --help and --json,
// the input checks that run before the database is opened, and output.

// flags is one run of a command: its flag set (with --json) and the checks
// of its flags, run in the order they were added once the line is parsed.
type flags struct {
	*flag.FlagSet
	e          *env
	json       *bool
	set        map[string]bool // the flags given on the command line, once it is parsed
	checks     []func() error
	beforeOpen []func() error // checks of the environment: their errors are failures, not usage errors
}

// need adds a check of the command line; its error text names the flag.
func (f *flags) need(check func() error) { f.checks = append(f.checks, check) }

// str declares a string flag that check (needUUID, needName, ...) accepts.
func (f *flags) str(name, usage string, check func(name, v string) error) *string {
	v := f.String(name, "", usage)
	f.need(func() error { return check(name, *v) })
	return v
}

// optional declares a string flag that check accepts when it is given.
func (f *flags) optional(name, usage string, check func(name, v string) error) *string {
	return f.str(name, usage, func(name, v string) error {
		if !f.set[name] {
			return nil
		}
		return check(name, v)
	})
}

func (f *flags) id(name, usage string) *string { return f.str(name, usage, needUUID) }

// byID is a command whose only flag is the id name: it gives the id to call
// and prints what call returns.
func byID[T any](name, usage string, call func(*store.DB, context.Context, string) (T, error),
	text func(io.Writer, T)) func(*flags) action {
	return func(f *flags) action {
		id := f.id(name, usage)
		return func(ctx context.Context, db *store.DB) error {
			v, err := call(db, ctx, *id)
			return f.output(v, err, func(w io.Writer) { text(w, v) })
		}
	}
}

// parse parses args and runs the checks. --help prints the command's help on
// stdout and returns flag.ErrHelp; any other problem is a usage error (the
// first a check found). Positional arguments are refused.
func (f *flags) parse(args []string) error {
	err := f.FlagSet.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		f.printHelp(f.e.stdout)
		return flag.ErrHelp
	case err != nil:
		msg := err.Error()
		if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
			var names []string
			f.VisitAll(func(fl *flag.Flag) { names = append(names, fl.Name) })
			if near := nearest.Name(strings.TrimPrefix(name, "-"), names); near != "" {
				msg += "; did you mean --" + near + "?"
			}
		}
		return f.usage(msg)
	case f.NArg() > 0:
		return f.usage(fmt.Sprintf("unexpected argument %q (every value is given with a --flag)", f.Arg(0)))
	}
	f.set = map[string]bool{}
	f.Visit(func(fl *flag.Flag) { f.set[fl.Name] = true })
	for _, check := range f.checks {
		if err := check(); err != nil {
			return f.usage(err.Error())
		}
	}
	return nil
}

func (f *flags) usage(msg string) error {
	return &cmdError{cmd: f.Name(), msg: printable(msg) + " (see --help)", err: ErrUsage}
}

// ifSet is err when the flag was given, else nil.
func (f *flags) ifSet(name string, err error) error {
	if !f.set[name] {
		return nil
	}
	return err
}

func (f *flags) printHelp(w io.Writer) {
	c := f.e.cmd
	fmt.Fprintf(w, "usage: %s\n\n%s.\n\nflags:\n", c.Usage, c.Short)
	f.VisitAll(func(fl *flag.Flag) {
		name, usage := flag.UnquoteUsage(fl)
		fmt.Fprintf(w, "  %s\n    \t%s", strings.TrimSpace("--"+fl.Name+" "+name), usage)
		if fl.DefValue != "" && fl.DefValue != "false" && fl.DefValue != "0" {
			fmt.Fprintf(w, " (default %s)", fl.DefValue)
		}
		fmt.Fprintln(w)
	})
	fmt.Fprintf(w, "\nExit status: 0 success, 1 failure (one-line reason on stderr), 2 usage error.\n")
}

// output prints v as JSON with --json, else calls text. A non-nil err (the
// failure of the store call that made v) is returned, and nothing printed.
func (f *flags) output(v any, err error, text func(w io.Writer)) error {
	return f.outputTo(f.e.stdout, v, err, text)
}

// outputTo is output on w, for a command whose stdout carries data of its
// own (prune-audit --export -).
func (f *flags) outputTo(w io.Writer, v any, err error, text func(w io.Writer)) error {
	if err != nil {
		return err
	}
	if *f.json {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false) // URLs stay readable; the output is not HTML
		return enc.Encode(v)
	}
	text(w)
	return nil
}

// table prints a header and one row per item, in aligned columns of its own.
func table[T any](w io.Writer, header string, items []T, row func(T) string) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, header)
	for _, it := range items {
		fmt.Fprintln(tw, row(it))
	}
	tw.Flush()
}

// expiry formats a legacy token's optional expiry.
func expiry(t *time.Time) string {
	if t == nil {
		return "never"
	}
	return stamp(t)
}

// stamp formats an optional time.
func stamp(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

// ref describes a source's pin: the commit, or "track:<branch>".
func ref(commit, tracking *string) string {
	if commit == nil && tracking != nil {
		return "track:" + *tracking
	}
	return orDash(commit)
}

func orDash(s *string) string {
	if s == nil {
		return "-"
	}
	return *s
}

func status(revoked bool, word string) string {
	if revoked {
		return word
	}
	return "active"
}

// Checks. Each returns nil or an error whose text names the flag.

var (
	profileRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)
	daysRE    = regexp.MustCompile(`^([0-9]{1,4})d$`)
)

// maxNameChars matches the schema's CHECK on names.
const maxNameChars = 200

var needUUID = required(func(name, v string) error {
	// The server's rule too: an id in another case than HeyAira prints names nothing.
	if !store.IsUUID(v) {
		return fmt.Errorf("--%s must be a UUID in lower case, as HeyAira prints it", name)
	}
	return nil
})

var needName = required(func(name, v string) error {
	switch {
	case !utf8.ValidString(v):
		return fmt.Errorf("--%s must be valid UTF-8", name)
	case utf8.RuneCountInString(v) > maxNameChars:
		return fmt.Errorf("--%s must be at most %d characters", name, maxNameChars)
	case strings.IndexFunc(v, unicode.IsControl) >= 0:
		return fmt.Errorf("--%s must not contain a control character", name)
	case strings.TrimSpace(v) != v:
		return fmt.Errorf("--%s must not start or end with a space", name)
	}
	return nil
})

// parseLifetime reads --expires-in: whole days ("90d") or a Go duration
// ("36h", "90m"), from one minute to store.MaxLegacyTokenLifetime.
func parseLifetime(v string) (time.Duration, error) {
	var d time.Duration
	var err error
	if m := daysRE.FindStringSubmatch(v); m != nil {
		n, _ := strconv.Atoi(m[1]) // at most 4 digits: cannot fail or overflow
		d = time.Duration(n) * 24 * time.Hour
	} else {
		d, err = time.ParseDuration(v)
	}
	if err != nil || d < time.Minute || d > store.MaxLegacyTokenLifetime {
		return 0, fmt.Errorf("--expires-in must be days such as 90d or a duration such as 36h, from 1m to %dd",
			store.MaxLegacyTokenLifetime/(24*time.Hour))
	}
	return d, nil
}

// The checks of package github's validators, which never echo the whole
// value, with what to do for the mistakes people make.
var (
	needOwner = required(hinted(githubRule(github.ValidateOwner), func(v string) string {
		if strings.ContainsAny(v, "/:") {
			return "give the owner's name alone (the NAME of github.com/NAME/repository), not a URL"
		}
		return ""
	}))
	needRepository = required(githubRule(github.ValidateRepo))
	needPath       = githubRule(github.ValidatePath)
	needCommitSHA  = hinted(githubRule(github.ValidateCommitSHA), func(v string) string {
		if len(v) < 40 && strings.Trim(v, "0123456789abcdef") == "" {
			return "a short SHA is not enough: `git rev-parse <short-sha>` in a clone prints the full 40 characters"
		}
		return ""
	})
	needBranch = githubRule(github.ValidateBranch)
)

// hinted adds hint(v), when it says something, to check's refusal.
func hinted(check func(name, v string) error, hint func(v string) string) func(name, v string) error {
	return func(name, v string) error {
		err := check(name, v)
		if h := hint(v); err != nil && h != "" {
			return fmt.Errorf("%w; %s", err, h)
		}
		return err
	}
}

// required refuses an empty value, then runs check.
func required(check func(name, v string) error) func(name, v string) error {
	return func(name, v string) error {
		if v == "" {
			return fmt.Errorf("--%s is required", name)
		}
		return check(name, v)
	}
}

// githubRule names the flag and the rule validate says was broken.
func githubRule(validate func(string) error) func(name, v string) error {
	return func(name, v string) error {
		err := validate(v)
		if err == nil {
			return nil
		}
		if re, ok := errors.AsType[*github.RuleError](err); ok {
			return fmt.Errorf("--%s: %s", name, re.Rule)
		}
		return fmt.Errorf("--%s: %w", name, err)
	}
}

func needPositive(name string, v int64) error {
	if v <= 0 {
		return fmt.Errorf("--%s is required: a positive integer", name)
	}
	return nil
}

func between(name string, v, lo, hi int64) error {
	if v < lo || v > hi {
		return fmt.Errorf("--%s must be between %d and %d", name, lo, hi)
	}
	return nil
}

// oneOf is the check of a required flag with a value from allowed.
func oneOf(allowed ...string) func(name, v string) error {
	return func(name, v string) error {
		if v == "" {
			return fmt.Errorf("--%s is required: one of %s", name, strings.Join(allowed, ", "))
		}
		if !slices.Contains(allowed, v) {
			return fmt.Errorf("--%s must be one of %s", name, strings.Join(allowed, ", "))
		}
		return nil
	}
}

// exactlyOne adds the check that exactly one of the flags is given.
func (f *flags) exactlyOne(a, b string) {
	f.need(func() error {
		switch sa, sb := f.set[a], f.set[b]; {
		case sa && sb:
			return fmt.Errorf("give only one of --%s and --%s", a, b)
		case !sa && !sb:
			return fmt.Errorf("give one of --%s and --%s", a, b)
		}
		return nil
	})
}

// printable replaces control characters so that a message stays on one line
// and cannot drive the terminal.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return '?'
		}
		return r
	}, s)
}

// shellQuote quotes s, made printable, as one POSIX shell word, for a
// command the administrator copies.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(printable(s), "'", `'\''`) + "'"
}
