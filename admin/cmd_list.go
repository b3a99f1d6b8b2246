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

func runListAccounts(ctx context.Context, e *env, args []string) error {
	f := e.flags()
	if err := f.parse(args); err != nil {
		return err
	}
	db, err := e.open(ctx, false)
	if err != nil {
		return failed(e.cmd.Name, err)
	}
	list, err := db.ListAccounts(ctx)
	if err != nil {
		return failed(e.cmd.Name, err)
	}
	return f.output(list, table("ACCOUNT ID\tNAME\tCREATED\tPROJECTS\tPRINCIPALS", list, func(a store.AccountSummary) string {
		return fmt.Sprintf("%s\t%s\t%s\t%d\t%d", a.ID, printable(a.Name), stamp(&a.CreatedAt), a.Projects, a.Principals)
	}))
}

func runListProjects(ctx context.Context, e *env, args []string) error {
	f := e.flags()
	account := f.String("account-id", "", "only the projects of this account `id`")
	if err := f.parse(args); err != nil {
		return err
	}
	if f.isSet("account-id") {
		if err := f.check(needUUID("account-id", *account)); err != nil {
			return err
		}
	}
	db, err := e.open(ctx, false)
	if err != nil {
		return failed(e.cmd.Name, err)
	}
	list, err := db.ListProjects(ctx, *account)
	if err != nil {
		return failed(e.cmd.Name, err)
	}
	return f.output(list, table("PROJECT ID\tACCOUNT ID\tNAME\tCREATED\tMEMBERS", list, func(p store.ProjectSummary) string {
		return fmt.Sprintf("%s\t%s\t%s\t%s\t%d", p.ID, p.AccountID, printable(p.Name), stamp(&p.CreatedAt), p.Members)
	}))
}

func runListPrincipals(ctx context.Context, e *env, args []string) error {
	f, account, db, err := e.byID(ctx, args, "account-id", "the account `id`")
	if err != nil {
		return err
	}
	list, err := db.ListPrincipals(ctx, account)
	if err != nil {
		return failed(e.cmd.Name, err)
	}
	return f.output(list, table("PRINCIPAL ID\tNAME\tCREATED\tDISABLED\tLIVE GRANTS\tLIVE SESSIONS\tPROJECTS", list,
		func(u store.PrincipalSummary) string {
			return fmt.Sprintf("%s\t%s\t%s\t%s\t%d\t%d\t%s", u.ID, printable(u.Name), stamp(&u.CreatedAt), stamp(u.DisabledAt),
				u.LiveGrants, u.LiveSessions, dash(strings.Join(u.ProjectIDs, " ")))
		}))
}

func runListMembers(ctx context.Context, e *env, args []string) error {
	f, project, db, err := e.byID(ctx, args, "project-id", "the project `id`")
	if err != nil {
		return err
	}
	list, err := db.ListMembers(ctx, project)
	if err != nil {
		return failed(e.cmd.Name, err)
	}
	return f.output(list, table("PRINCIPAL ID\tNAME\tMEMBER SINCE\tDISABLED\tLIVE GRANTS", list, func(m store.MemberSummary) string {
		return fmt.Sprintf("%s\t%s\t%s\t%s\t%d", m.PrincipalID, printable(m.PrincipalName), stamp(&m.MemberSince),
			stamp(m.DisabledAt), m.LiveGrants)
	}))
}

// table returns the text output of a list: a header and one row per item.
func table[T any](header string, items []T, row func(T) string) func(io.Writer) {
	return func(w io.Writer) {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, header)
		for _, it := range items {
			fmt.Fprintln(tw, row(it))
		}
		tw.Flush()
	}
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
