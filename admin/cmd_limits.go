package admin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

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
	{"github-requests-per-hour", 1, 1_000_000, "GitHub requests the project may make per clock hour, shared by the replicas (HEYAIRA_REPLICAS)"},
	{"memory-entries", 0, 10_000_000, "memory entries the project may hold"},
	{"memory-bytes", 0, 1 << 40, "bytes of memory content the project may hold in all"},
	{"tasks", 0, 10_000_000, "tasks the project may hold"},
	{"workflows", 0, 10_000_000, "stored workflows the project may hold"},
}

func runSetProjectLimits(f *flags) action {
	project := f.id("project-id", "the project's `id`")
	values := make([]*int64, len(limitFlags))
	for i, l := range limitFlags {
		values[i] = f.Int64(l.name, 0, fmt.Sprintf("`n` %s (%d to %d)", l.usage, l.min, l.max))
		f.need(func() error { return f.ifSet(l.name, between(l.name, *values[i], l.min, l.max)) })
	}
	f.need(func() error {
		if !slices.ContainsFunc(limitFlags, func(l limitFlag) bool { return f.set[l.name] }) {
			return errors.New("give at least one limit to set")
		}
		return nil
	})
	return func(ctx context.Context, db *store.DB) error {
		// given is the value of limitFlags[i], nil when the flag was not given.
		given := func(i int) *int {
			if !f.set[limitFlags[i].name] {
				return nil
			}
			n := int(*values[i])
			return &n
		}
		u := store.LimitsUpdate{GitHubRequestsHourly: given(0), MemoryEntries: given(1),
			Tasks: given(3), Workflows: given(4)}
		if f.set["memory-bytes"] {
			u.MemoryBytes = values[2]
		}
		l, err := db.SetProjectLimits(ctx, *project, u)
		out := struct {
			ProjectID string       `json:"project_id"`
			Limits    store.Limits `json:"limits"`
		}{*project, l}
		return f.output(out, err, func(w io.Writer) {
			table(w, "LIMIT\tVALUE", limitRows(l), func(r limitRow) string {
				return fmt.Sprintf("%s\t%d", r.name, r.limit)
			})
		})
	}
}

var runProjectUsage = byID("project-id", "the project's `id`", (*store.DB).ProjectUsage,
	func(w io.Writer, u store.Usage) {
		used := []int64{-1, int64(u.MemoryEntries), u.MemoryBytes, int64(u.Tasks), int64(u.Workflows)}
		table(w, "WHAT\tUSED\tLIMIT", limitRows(u.Limits), func(r limitRow) string {
			n := "-" // GitHub requests are counted in each server process, not stored
			if used[r.i] >= 0 {
				n = fmt.Sprint(used[r.i])
			}
			return fmt.Sprintf("%s\t%s\t%d", r.name, n, r.limit)
		})
	})

type limitRow struct {
	i     int // the index in limitFlags
	name  string
	limit int64
}

// limitRows is l in the order of limitFlags.
func limitRows(l store.Limits) []limitRow {
	v := []int64{int64(l.GitHubRequestsHourly), int64(l.MemoryEntries), l.MemoryBytes, int64(l.Tasks), int64(l.Workflows)}
	rows := make([]limitRow, len(limitFlags))
	for i, f := range limitFlags {
		rows[i] = limitRow{i, f.name, v[i]}
	}
	return rows
}
