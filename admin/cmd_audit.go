package admin

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"heyaira/store"
)

// This file holds the audit command: the audit log of a project or an account.

// Bounds of audit --limit.
const (
	defaultAuditLimit = 1000
	maxAuditLimit     = 100000
)

func runAudit(ctx context.Context, e *env, args []string) error {
	f := e.flags()
	project := f.String("project-id", "", "show the events of this project `id`")
	account := f.String("account-id", "", "show the events of this account `id`, its projects' included")
	since := f.String("since", "", "show events at or after this `time` (RFC 3339, e.g. 2026-01-02T15:04:05Z)")
	limit := f.Int("limit", defaultAuditLimit, "show at most `n` events, oldest first (1 to 100000)")
	if err := f.parse(args); err != nil {
		return err
	}
	checks := []error{f.exactlyOne("project-id", "account-id")}
	if f.isSet("project-id") {
		checks = append(checks, needUUID("project-id", *project))
	}
	if f.isSet("account-id") {
		checks = append(checks, needUUID("account-id", *account))
	}
	var from time.Time
	if f.isSet("since") {
		t, err := time.Parse(time.RFC3339, *since)
		if err != nil {
			checks = append(checks, fmt.Errorf("--since must be an RFC 3339 time such as 2026-01-02T15:04:05Z"))
		}
		from = t
	}
	if *limit < 1 || *limit > maxAuditLimit {
		checks = append(checks, fmt.Errorf("--limit must be between 1 and %d", maxAuditLimit))
	}
	if err := f.check(checks...); err != nil {
		return err
	}
	db, err := e.open(ctx, false)
	if err != nil {
		return failed(e.cmd.Name, err)
	}
	out := struct {
		ProjectID string             `json:"project_id,omitempty"`
		AccountID string             `json:"account_id,omitempty"`
		Events    []store.AuditEvent `json:"events"`
	}{ProjectID: *project, AccountID: *account}
	if *project != "" {
		// ListAudit finds no events for an unknown project; say so instead of printing nothing.
		if _, err := db.GetProject(ctx, *project); err != nil {
			return failed(e.cmd.Name, err)
		}
		out.Events, err = db.ListAudit(ctx, *project, from, *limit)
	} else {
		out.Events, err = db.ListAccountAudit(ctx, *account, from, *limit)
	}
	if err != nil {
		return failed(e.cmd.Name, err)
	}
	if out.Events == nil {
		out.Events = []store.AuditEvent{}
	}
	return f.output(out, func(w io.Writer) {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tAT\tACTOR\tACTION\tPROJECT\tTARGET\tOUTCOME\tDETAILS")
		for _, ev := range out.Events {
			details := "-"
			if len(ev.Details) > 0 {
				b, _ := json.Marshal(ev.Details)
				details = string(b)
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", ev.ID, stamp(&ev.At), ev.Actor, ev.Action,
				orDash(nonEmpty(ev.ProjectID)), ev.Target, ev.Outcome, printable(details))
		}
		tw.Flush()
	})
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
