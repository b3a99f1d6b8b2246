package admin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"text/tabwriter"
	"time"

	"heyaira/store"
)

// This file holds the commands that keep the audit log bounded:
// prune-audit (export the rows older than a date, then delete exactly
// those) and audit-stats (how big the log is). docs/admin.md "Audit
// retention" gives the policy.

var dateRE = regexp.MustCompile(`^\d{4}-\d\d-\d\d$`)

// parseCutoff reads --before: a date (midnight UTC) or an RFC 3339 time,
// not in the future.
func parseCutoff(v string, now time.Time) (time.Time, error) {
	if v == "" {
		return time.Time{}, errors.New("--before is required: prune-audit never prunes by default")
	}
	layout := time.RFC3339
	if dateRE.MatchString(v) {
		layout = time.DateOnly
	}
	t, err := time.Parse(layout, v)
	if err != nil {
		return time.Time{}, errors.New("--before must be a date such as 2026-01-01 or an RFC 3339 time such as 2026-01-02T15:04:05Z")
	}
	if t.After(now) {
		return time.Time{}, errors.New("--before must not be in the future")
	}
	return t.UTC(), nil
}

func runPruneAudit(f *flags) action {
	e := f.e
	before := f.String("before", "", "prune the rows older than this `date` (2026-01-01, midnight UTC) or RFC 3339 time; required")
	export := f.String("export", "", "write the rows, as JSON lines, to this new `file` before deleting them; - for stdout")
	dryRun := f.Bool("dry-run", false, "only count the rows that would be pruned; change nothing")
	var cutoff time.Time
	f.need(func() (err error) {
		cutoff, err = parseCutoff(*before, time.Now())
		return err
	})
	f.need(func() error {
		switch {
		case *dryRun && f.isSet("export"):
			return errors.New("give --export or --dry-run, not both")
		case !*dryRun && *export == "":
			return errors.New("--export is required: a file that does not exist yet, or - for stdout (or --dry-run)")
		}
		return nil
	})
	return func(ctx context.Context, db *store.DB) error {
		if *dryRun {
			p, err := db.CountAuditBefore(ctx, cutoff)
			return f.output(pruneOutput{p, true, nil}, err, func(w io.Writer) {
				fmt.Fprintf(w, "dry run: %d audit row(s) older than %s would be pruned%s; nothing changed\n",
					p.Rows, stamp(&p.Before), spanText(p.AuditSpan))
			})
		}
		x, err := createAuditExport(*export, e.stdout)
		if err != nil {
			return err
		}
		p, err := db.PruneAudit(ctx, cutoff, x)
		if note := x.close(err != nil); err != nil {
			ce := failed(e.cmd.Name, err).(*cmdError)
			ce.msg += note
			return ce
		}
		summary := e.stdout
		if *export == "-" {
			summary = e.stderr // stdout holds the rows
		}
		return f.outputTo(summary, pruneOutput{p, false, export}, nil, func(w io.Writer) {
			fmt.Fprintf(w, "pruned %d audit row(s) older than %s%s, exported to %s first\n",
				p.Rows, stamp(&p.Before), spanText(p.AuditSpan), exportName(*export))
		})
	}
}

// pruneOutput is prune-audit's JSON.
type pruneOutput struct {
	store.AuditPrune
	DryRun bool    `json:"dry_run"`
	Export *string `json:"export"` // the file as given, "-" for stdout; null in a dry run
}

func exportName(path string) string {
	if path == "-" {
		return "stdout"
	}
	return printable(path)
}

// spanText describes a span in a sentence: " (ids 1–9, 2026-01-01T… to …)".
func spanText(s store.AuditSpan) string {
	if s.Rows == 0 {
		return ""
	}
	return fmt.Sprintf(" (ids %d to %d, at %s to %s)", *s.FirstID, *s.LastID, stamp(s.OldestAt), stamp(s.NewestAt))
}

func runAuditStats(f *flags) action {
	return func(ctx context.Context, db *store.DB) error {
		s, err := db.AuditStats(ctx)
		return f.output(s, err, func(w io.Writer) {
			tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
			fmt.Fprintf(tw, "rows\t%d\n", s.Rows)
			fmt.Fprintf(tw, "bytes\t%d\n", s.Bytes)
			fmt.Fprintf(tw, "oldest\t%s\n", stamp(s.OldestAt))
			fmt.Fprintf(tw, "newest\t%s\n", stamp(s.NewestAt))
			last := "never"
			if p := s.LastPrune; p != nil {
				last = fmt.Sprintf("%s (before %v, %v row(s))", stamp(&p.At), p.Details["before"], p.Details["rows"])
			}
			fmt.Fprintf(tw, "last prune\t%s\n", printable(last))
			tw.Flush()
		})
	}
}
