package admin

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"heyaira/store"
)

// This file holds the inventory commands: list-accounts, list-projects,
// list-principals and list-members. They only read. Each --json is an
// array of objects ([] when there is nothing), in creation order.

func runListAccounts(f *flags) action {
	return func(ctx context.Context, db *store.DB) error {
		list, err := db.ListAccounts(ctx)
		return f.output(list, err, func(w io.Writer) {
			table(w, "ACCOUNT ID\tNAME\tCREATED\tPROJECTS\tPRINCIPALS", list, func(a store.AccountSummary) string {
				return fmt.Sprintf("%s\t%s\t%s\t%d\t%d", a.ID, printable(a.Name), stamp(&a.CreatedAt), a.Projects, a.Principals)
			})
		})
	}
}

func runListProjects(f *flags) action {
	account := f.optional("account-id", "only the projects of this account `id`", needUUID)
	return func(ctx context.Context, db *store.DB) error {
		list, err := db.ListProjects(ctx, *account)
		return f.output(list, err, func(w io.Writer) {
			table(w, "PROJECT ID\tACCOUNT ID\tNAME\tCREATED\tMEMBERS", list, func(p store.ProjectSummary) string {
				return fmt.Sprintf("%s\t%s\t%s\t%s\t%d", p.ID, p.AccountID, printable(p.Name), stamp(&p.CreatedAt), p.Members)
			})
		})
	}
}

var runListPrincipals = byID("account-id", "the account `id`", (*store.DB).ListPrincipals,
	func(w io.Writer, list []store.PrincipalSummary) {
		table(w, "PRINCIPAL ID\tNAME\tCREATED\tDISABLED\tLIVE GRANTS\tLIVE SESSIONS\tPROJECTS", list,
			func(u store.PrincipalSummary) string {
				return fmt.Sprintf("%s\t%s\t%s\t%s\t%d\t%d\t%s", u.ID, printable(u.Name), stamp(&u.CreatedAt),
					stamp(u.DisabledAt), u.LiveGrants, u.LiveSessions, dash(strings.Join(u.ProjectIDs, " ")))
			})
	})

var runListMembers = byID("project-id", "the project `id`", (*store.DB).ListMembers,
	func(w io.Writer, list []store.MemberSummary) {
		table(w, "PRINCIPAL ID\tNAME\tMEMBER SINCE\tDISABLED\tLIVE GRANTS", list, func(m store.MemberSummary) string {
			return fmt.Sprintf("%s\t%s\t%s\t%s\t%d", m.PrincipalID, printable(m.PrincipalName), stamp(&m.MemberSince),
				stamp(m.DisabledAt), m.LiveGrants)
		})
	})

// table prints a header and one row per item, in aligned columns. Tables
// one after the other, with an empty line between, are aligned each on its own.
func table[T any](w io.Writer, header string, items []T, row func(T) string) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, header)
	for _, it := range items {
		fmt.Fprintln(tw, row(it))
	}
	tw.Flush()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
