package admin

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"text/tabwriter"
	"time"

	"heyaira/store"
)

// This file holds the audit commands: audit (the log of a project or an
// account), and the two that keep the log bounded: prune-audit (export the
// rows older than a date, then delete exactly those) and audit-stats (how big
// the log is). docs/admin.md "Audit retention" gives the policy.

func runAudit(f *flags) action {
	f.exactlyOne("project-id", "account-id")
	project := f.optional("project-id", "show the events of this project `id`", needUUID)
	account := f.optional("account-id", "show the events of this account `id`, its projects' included", needUUID)
	var from time.Time
	f.optional("since", "show events at or after this `time` (RFC 3339, e.g. 2026-01-02T15:04:05Z)",
		func(_, v string) (err error) {
			if from, err = time.Parse(time.RFC3339, v); err != nil {
				return fmt.Errorf("--since must be an RFC 3339 time such as 2026-01-02T15:04:05Z")
			}
			return nil
		})
	limit := f.Int("limit", 1000, "show at most `n` events, oldest first (1 to 100000)")
	f.need(func() error { return between("limit", int64(*limit), 1, 100000) })
	return func(ctx context.Context, db *store.DB) (err error) {
		out := struct {
			ProjectID string             `json:"project_id,omitempty"`
			AccountID string             `json:"account_id,omitempty"`
			Events    []store.AuditEvent `json:"events"`
		}{ProjectID: *project, AccountID: *account}
		if *project != "" {
			// ListAudit finds no events for an unknown project; say so instead of printing nothing.
			if _, err := db.GetProject(ctx, *project); err != nil {
				return err
			}
			out.Events, err = db.ListAudit(ctx, *project, from, *limit)
		} else {
			out.Events, err = db.ListAccountAudit(ctx, *account, from, *limit)
		}
		if out.Events == nil {
			out.Events = []store.AuditEvent{}
		}
		return f.output(out, err, func(w io.Writer) {
			table(w, "ID\tAT\tACTOR\tACTION\tPROJECT\tTARGET\tOUTCOME\tDETAILS", out.Events,
				func(ev store.AuditEvent) string {
					details := "-"
					if len(ev.Details) > 0 {
						b, _ := json.Marshal(ev.Details)
						details = string(b)
					}
					return fmt.Sprintf("%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s", ev.ID, stamp(&ev.At), ev.Actor, ev.Action,
						cmp.Or(ev.ProjectID, "-"), ev.Target, ev.Outcome, printable(details))
				})
		})
	}
}

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
		switch {
		case err != nil:
		case *dryRun && f.set["export"]:
			err = errors.New("give --export or --dry-run, not both")
		case !*dryRun && *export == "":
			err = errors.New("--export is required: a file that does not exist yet, or - for stdout (or --dry-run)")
		}
		return err
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
		summary, name := e.stdout, printable(*export)
		if *export == "-" {
			summary, name = e.stderr, "stdout" // stdout holds the rows
		}
		return f.outputTo(summary, pruneOutput{p, false, export}, nil, func(w io.Writer) {
			fmt.Fprintf(w, "pruned %d audit row(s) older than %s%s, exported to %s first\n",
				p.Rows, stamp(&p.Before), spanText(p.AuditSpan), name)
		})
	}
}

// pruneOutput is prune-audit's JSON.
type pruneOutput struct {
	store.AuditPrune
	DryRun bool    `json:"dry_run"`
	Export *string `json:"export"` // the file as given, "-" for stdout; null in a dry run
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

// auditExport writes audit rows as JSON lines, where prune-audit puts them
// before they are deleted: a new file, or stdout. It implements
// store.AuditSink. The store deletes rows only after Flush returns nil, and
// for a file Flush means the rows are on disk: the file and its directory are
// synced.
type auditExport struct {
	path string   // as given; "-" for stdout
	file *os.File // nil for stdout
	buf  *bufio.Writer
	enc  *json.Encoder
	rows int64
}

// createAuditExport opens the export: path "-" is stdout; any other path
// must not exist yet, so an export never overwrites an earlier one.
func createAuditExport(path string, stdout io.Writer) (*auditExport, error) {
	x := &auditExport{path: path}
	if path == "-" {
		x.buf = bufio.NewWriter(stdout)
	} else {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("export file %s already exists: give a new file", printable(path))
		}
		if err != nil {
			return nil, fmt.Errorf("cannot create export file: %v", err)
		}
		x.file, x.buf = f, bufio.NewWriter(f)
	}
	x.enc = json.NewEncoder(x.buf)
	x.enc.SetEscapeHTML(false)
	return x, nil
}

// Export writes one row as one line of JSON, the shape of audit --json's events.
func (x *auditExport) Export(e store.AuditEvent) error {
	if err := x.enc.Encode(e); err != nil {
		return x.fail(err)
	}
	x.rows++
	return nil
}

// Flush writes out what is buffered and, for a file, syncs it and its directory.
func (x *auditExport) Flush() error {
	if err := x.buf.Flush(); err != nil {
		return x.fail(err)
	}
	if x.file == nil {
		return nil
	}
	if err := x.file.Sync(); err != nil {
		return x.fail(err)
	}
	dir, err := os.Open(filepath.Dir(x.path))
	if err != nil {
		return x.fail(err)
	}
	defer dir.Close()
	if err := dir.Sync(); err != nil {
		return x.fail(err)
	}
	return nil
}

func (x *auditExport) fail(err error) error {
	if x.file == nil {
		return fmt.Errorf("write to stdout: %v", err)
	}
	return fmt.Errorf("write %s: %v", printable(x.path), err)
}

// close closes the file. After a failed prune, a file that holds no row is
// removed (nothing was deleted, so it holds nothing of value); one that
// holds rows is kept, since the database may have deleted them if the
// commit failed on the way back. It returns what to add to the error.
func (x *auditExport) close(pruneFailed bool) string {
	if x.file == nil {
		return ""
	}
	x.file.Close()
	switch {
	case !pruneFailed:
		return ""
	case x.rows == 0:
		os.Remove(x.path)
		return ""
	}
	return fmt.Sprintf("; export file %s is kept: it holds %d row(s), which may still be in the database too",
		printable(x.path), x.rows)
}
