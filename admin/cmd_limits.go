package admin

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	"heyaira/store"
)

// This file holds the tenant-limit commands: set-project-limits (a
// project's GitHub request budget and storage quotas) and project-usage
// (what the project stores, beside its limits).

// limitFlag is one limit flag of set-project-limits and its bounds (those
// of schema.sql's project_limits checks).
type limitFlag struct {
	name     string
	min, max int64
	usage    string
}

var limitFlags = []limitFlag{
	{"github-requests-per-hour", 1, 1_000_000, "GitHub requests the project may make per clock hour, in each server process"},
	{"memory-entries", 0, 10_000_000, "memory entries the project may hold"},
	{"memory-bytes", 0, 1 << 40, "bytes of memory content the project may hold in all"},
	{"tasks", 0, 10_000_000, "tasks the project may hold"},
	{"workflows", 0, 10_000_000, "stored workflows the project may hold"},
}

func runSetProjectLimits(ctx context.Context, e *env, args []string) error {
	f := e.flags()
	project := f.String("project-id", "", "the project's `id`")
	values := make([]*int64, len(limitFlags))
	for i, l := range limitFlags {
		values[i] = f.Int64(l.name, 0, fmt.Sprintf("`n` %s (%d to %d)", l.usage, l.min, l.max))
	}
	if err := f.parse(args); err != nil {
		return err
	}
	checks := []error{needUUID("project-id", *project)}
	var u store.LimitsUpdate
	set := 0
	for i, l := range limitFlags {
		if !f.isSet(l.name) {
			continue
		}
		set++
		v := *values[i]
		if v < l.min || v > l.max {
			checks = append(checks, fmt.Errorf("--%s must be between %d and %d", l.name, l.min, l.max))
		}
		n := int(v)
		switch l.name {
		case "github-requests-per-hour":
			u.GitHubRequestsHourly = &n
		case "memory-entries":
			u.MemoryEntries = &n
		case "memory-bytes":
			u.MemoryBytes = &v
		case "tasks":
			u.Tasks = &n
		case "workflows":
			u.Workflows = &n
		}
	}
	if set == 0 {
		checks = append(checks, fmt.Errorf("give at least one limit to set"))
	}
	if err := f.check(checks...); err != nil {
		return err
	}
	db, err := e.open(ctx, false)
	if err != nil {
		return failed(e.cmd.Name, err)
	}
	l, err := db.SetProjectLimits(ctx, *project, u)
	if err != nil {
		return failed(e.cmd.Name, err)
	}
	out := struct {
		ProjectID string       `json:"project_id"`
		Limits    store.Limits `json:"limits"`
	}{*project, l}
	return f.output(out, func(w io.Writer) {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "LIMIT\tVALUE")
		for _, r := range limitRows(l) {
			fmt.Fprintf(tw, "%s\t%d\n", r.name, r.limit)
		}
		tw.Flush()
	})
}

func runProjectUsage(ctx context.Context, e *env, args []string) error {
	f := e.flags()
	project := f.String("project-id", "", "the project's `id`")
	if err := f.parse(args); err != nil {
		return err
	}
	if err := f.check(needUUID("project-id", *project)); err != nil {
		return err
	}
	db, err := e.open(ctx, false)
	if err != nil {
		return failed(e.cmd.Name, err)
	}
	u, err := db.ProjectUsage(ctx, *project)
	if err != nil {
		return failed(e.cmd.Name, err)
	}
	used := []int64{-1, int64(u.MemoryEntries), u.MemoryBytes, int64(u.Tasks), int64(u.Workflows)}
	return f.output(u, func(w io.Writer) {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "WHAT\tUSED\tLIMIT")
		for i, r := range limitRows(u.Limits) {
			n := "-" // GitHub requests are counted in each server process, not stored
			if used[i] >= 0 {
				n = fmt.Sprint(used[i])
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\n", r.name, n, r.limit)
		}
		tw.Flush()
	})
}

type limitRow struct {
	name  string
	limit int64
}

// limitRows is l in the order of limitFlags.
func limitRows(l store.Limits) []limitRow {
	v := []int64{int64(l.GitHubRequestsHourly), int64(l.MemoryEntries), l.MemoryBytes, int64(l.Tasks), int64(l.Workflows)}
	rows := make([]limitRow, len(limitFlags))
	for i, f := range limitFlags {
		rows[i] = limitRow{f.name, v[i]}
	}
	return rows
}
