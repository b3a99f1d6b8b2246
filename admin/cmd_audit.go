package admin

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"heyaira/store"
)

// This file holds the audit command: the audit log of a project or an account.

// Bounds of audit --limit.
const (
	defaultAuditLimit = 1000
	maxAuditLimit     = 100000
)

func runAudit(f *flags) action {
	f.exactlyOne("project-id", "account-id")
	project := f.optional("project-id", "show the events of this project `id`", needUUID)
	account := f.optional("account-id", "show the events of this account `id`, its projects' included", needUUID)
	since := f.String("since", "", "show events at or after this `time` (RFC 3339, e.g. 2026-01-02T15:04:05Z)")
	limit := f.Int("limit", defaultAuditLimit, "show at most `n` events, oldest first (1 to 100000)")
	var from time.Time
	f.need(func() (err error) {
		if !f.isSet("since") {
			return nil
		}
		if from, err = time.Parse(time.RFC3339, *since); err != nil {
			return fmt.Errorf("--since must be an RFC 3339 time such as 2026-01-02T15:04:05Z")
		}
		return nil
	})
	f.need(func() error { return between("limit", int64(*limit), 1, maxAuditLimit) })
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
			table(w, "ID\tAT\tACTOR\tACTION\tPROJECT\tTARGET\tOUTCOME\tDETAILS", out.Events, func(ev store.AuditEvent) string {
				details := "-"
				if len(ev.Details) > 0 {
					b, _ := json.Marshal(ev.Details)
					details = string(b)
				}
				return fmt.Sprintf("%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s", ev.ID, stamp(&ev.At), ev.Actor, ev.Action,
					orDash(nonEmpty(ev.ProjectID)), ev.Target, ev.Outcome, printable(details))
			})
		})
	}
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
