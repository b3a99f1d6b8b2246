package admin

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"heyaira/internal/publicurl"
	"heyaira/oauth"
	"heyaira/store"
)

// This file holds the tenant-tree commands: migrate, create-account,
// create-project, create-principal, add-member and signin-link; then the
// commands that list the tree.

func runMigrate(f *flags) action {
	return func(ctx context.Context, db *store.DB) error {
		// migrate changes no data, so it writes no audit row; heyaira_schema records the version.
		return f.output(map[string]any{"migrated": true}, db.Migrate(ctx, f.e.schema), func(w io.Writer) {
			fmt.Fprintln(w, "schema applied")
		})
	}
}

func runCreateAccount(f *flags) action {
	name := f.str("name", "the account's display `name` (1 to 200 characters)", needName)
	return func(ctx context.Context, db *store.DB) error {
		a, err := db.CreateAccount(ctx, *name)
		return f.output(a, err, func(w io.Writer) { fmt.Fprintln(w, a.ID) })
	}
}

func runCreateProject(f *flags) action {
	account := f.id("account-id", "the `id` of the account that owns the project")
	name := f.str("name", "the project's display `name` (1 to 200 characters)", needName)
	return func(ctx context.Context, db *store.DB) error {
		p, err := db.CreateProject(ctx, *account, *name)
		return f.output(p, err, func(w io.Writer) { fmt.Fprintln(w, p.ID) })
	}
}

func runCreatePrincipal(f *flags) action {
	account := f.id("account-id", "the `id` of the principal's account")
	name := f.str("name", "the principal's display `name` (1 to 200 characters)", needName)
	return func(ctx context.Context, db *store.DB) error {
		u, err := db.CreatePrincipal(ctx, *account, *name)
		return f.output(u, err, func(w io.Writer) { fmt.Fprintln(w, u.ID) })
	}
}

func runAddMember(f *flags) action {
	project := f.id("project-id", "the project `id`")
	principal := f.id("principal-id", "the principal `id` (same account as the project)")
	return func(ctx context.Context, db *store.DB) error {
		m, err := db.AddMember(ctx, *project, *principal)
		return f.output(m, err, func(w io.Writer) {
			fmt.Fprintf(w, "principal %s is a member of project %s\n", m.PrincipalID, m.ProjectID)
		})
	}
}

func runSigninLink(f *flags) action {
	e := f.e
	principal := f.id("principal-id", "the `id` of the principal who will sign in")
	var base string
	f.beforeOpen = append(f.beforeOpen, func() (err error) {
		base, err = publicurl.Check(e.getenv("HEYAIRA_PUBLIC_URL")) // the server's own rule
		return err
	})
	secrets := f.secrets()
	return func(ctx context.Context, db *store.DB) error {
		secret := secrets().Mint(oauth.PrefixSignin, time.Now().Add(store.SigninLinkTTL+mintSlack))
		l, err := db.CreateSigninLink(ctx, *principal, oauth.Hash(secret), store.SigninLinkTTL)
		// The secret travels only in this URL, printed once; the store has its hash.
		link := base + "/signin?token=" + secret
		out := struct {
			store.SigninLink
			URL string `json:"url"`
		}{l, link}
		return f.output(out, err, func(w io.Writer) {
			fmt.Fprintln(w, link)
			fmt.Fprintf(e.stderr, "%s: one-time sign-in link for principal %s, valid until %s; it is shown only once\n",
				e.prog, l.PrincipalID, l.ExpiresAt.UTC().Format(time.RFC3339))
		})
	}
}

// The inventory commands: list-accounts, list-projects, list-principals and
// list-members. They only read. Each --json is an array of objects ([] when
// there is nothing), in creation order.

func runListAccounts(f *flags) action {
	return func(ctx context.Context, db *store.DB) error {
		list, err := db.ListAccounts(ctx)
		return f.output(list, err, func(w io.Writer) {
			table(w, "ACCOUNT ID\tNAME\tCREATED\tPROJECTS\tPRINCIPALS", list, func(a store.AccountSummary) string {
				return fmt.Sprintf("%s\t%s\t%s\t%d\t%d", a.ID, printable(a.Name), stamp(&a.CreatedAt),
					a.Projects, a.Principals)
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
					stamp(u.DisabledAt), u.LiveGrants, u.LiveSessions, cmp.Or(strings.Join(u.ProjectIDs, " "), "-"))
			})
	})

var runListMembers = byID("project-id", "the project `id`", (*store.DB).ListMembers,
	func(w io.Writer, list []store.MemberSummary) {
		table(w, "PRINCIPAL ID\tNAME\tMEMBER SINCE\tDISABLED\tLIVE GRANTS", list, func(m store.MemberSummary) string {
			return fmt.Sprintf("%s\t%s\t%s\t%s\t%d", m.PrincipalID, printable(m.PrincipalName), stamp(&m.MemberSince),
				stamp(m.DisabledAt), m.LiveGrants)
		})
	})
