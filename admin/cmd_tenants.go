package admin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"heyaira/store"
)

// This file holds the tenant-tree commands: migrate, create-account,
// create-project, create-principal, add-member and signin-link.

func runMigrate(ctx context.Context, e *env, args []string) error {
	f := e.flags()
	if err := f.parse(args); err != nil {
		return err
	}
	db, err := e.open(ctx, true)
	if err != nil {
		return failed(e.cmd.Name, err)
	}
	// migrate changes no data, so it writes no audit row; heyaira_schema records the version.
	if err := db.Migrate(ctx, e.schema); err != nil {
		return failed(e.cmd.Name, err)
	}
	return f.output(map[string]any{"migrated": true}, func(w io.Writer) {
		fmt.Fprintln(w, "schema applied")
	})
}

func runCreateAccount(ctx context.Context, e *env, args []string) error {
	f := e.flags()
	name := f.String("name", "", "the account's display `name` (1 to 200 characters)")
	if err := f.parse(args); err != nil {
		return err
	}
	if err := f.check(needName("name", *name)); err != nil {
		return err
	}
	db, err := e.open(ctx, false)
	if err != nil {
		return failed(e.cmd.Name, err)
	}
	a, err := db.CreateAccount(ctx, *name)
	if err != nil {
		return failed(e.cmd.Name, err)
	}
	return f.output(a, func(w io.Writer) { fmt.Fprintln(w, a.ID) })
}

func runCreateProject(ctx context.Context, e *env, args []string) error {
	return createInAccount(ctx, e, args, "the `id` of the account that owns the project",
		"the project's display `name` (1 to 200 characters)",
		func(db *store.DB, account, name string) (store.Project, string, error) {
			p, err := db.CreateProject(ctx, account, name)
			return p, p.ID, err
		})
}

func runCreatePrincipal(ctx context.Context, e *env, args []string) error {
	return createInAccount(ctx, e, args, "the `id` of the principal's account",
		"the principal's display `name` (1 to 200 characters)",
		func(db *store.DB, account, name string) (store.Principal, string, error) {
			u, err := db.CreatePrincipal(ctx, account, name)
			return u, u.ID, err
		})
}

// createInAccount is create-project and create-principal: something named
// --name in the account --account-id, printed as its id.
func createInAccount[T any](ctx context.Context, e *env, args []string, accountUsage, nameUsage string,
	create func(db *store.DB, account, name string) (T, string, error)) error {
	f := e.flags()
	account := f.String("account-id", "", accountUsage)
	name := f.String("name", "", nameUsage)
	if err := f.parse(args); err != nil {
		return err
	}
	if err := f.check(needUUID("account-id", *account), needName("name", *name)); err != nil {
		return err
	}
	db, err := e.open(ctx, false)
	if err != nil {
		return failed(e.cmd.Name, err)
	}
	v, id, err := create(db, *account, *name)
	if err != nil {
		return failed(e.cmd.Name, err)
	}
	return f.output(v, func(w io.Writer) { fmt.Fprintln(w, id) })
}

func runAddMember(ctx context.Context, e *env, args []string) error {
	f := e.flags()
	project := f.String("project-id", "", "the project `id`")
	principal := f.String("principal-id", "", "the principal `id` (same account as the project)")
	if err := f.parse(args); err != nil {
		return err
	}
	if err := f.check(needUUID("project-id", *project), needUUID("principal-id", *principal)); err != nil {
		return err
	}
	db, err := e.open(ctx, false)
	if err != nil {
		return failed(e.cmd.Name, err)
	}
	m, err := db.AddMember(ctx, *project, *principal)
	if err != nil {
		return failed(e.cmd.Name, err)
	}
	return f.output(m, func(w io.Writer) {
		fmt.Fprintf(w, "principal %s is a member of project %s\n", m.PrincipalID, m.ProjectID)
	})
}

// defaultPublicURL is HEYAIRA_PUBLIC_URL when unset (docs/design.md §3).
const defaultPublicURL = "http://127.0.0.1:8080"

func runSigninLink(ctx context.Context, e *env, args []string) error {
	f := e.flags()
	principal := f.String("principal-id", "", "the `id` of the principal who will sign in")
	if err := f.parse(args); err != nil {
		return err
	}
	if err := f.check(needUUID("principal-id", *principal)); err != nil {
		return err
	}
	base, err := publicURL(e.getenv("HEYAIRA_PUBLIC_URL"))
	if err != nil {
		return failed(e.cmd.Name, err)
	}
	secret, hash := newSecret("")
	db, err := e.open(ctx, false)
	if err != nil {
		return failed(e.cmd.Name, err)
	}
	l, err := db.CreateSigninLink(ctx, *principal, hash, store.SigninLinkTTL)
	if err != nil {
		return failed(e.cmd.Name, err)
	}
	// The secret travels only in this URL, printed once; the store has its hash.
	link := base + "/signin?token=" + secret
	out := struct {
		store.SigninLink
		URL string `json:"url"`
	}{l, link}
	return f.output(out, func(w io.Writer) {
		fmt.Fprintln(w, link)
		fmt.Fprintf(e.stderr, "%s: one-time sign-in link for principal %s, valid until %s; it is shown only once\n",
			e.prog, l.PrincipalID, l.ExpiresAt.UTC().Format(time.RFC3339))
	})
}

// publicURL checks HEYAIRA_PUBLIC_URL (or its default) and returns it without
// a trailing slash.
func publicURL(v string) (string, error) {
	if v == "" {
		v = defaultPublicURL
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
		u.User != nil || u.RawQuery != "" || u.Fragment != "" || strings.HasSuffix(v, "?") {
		return "", errors.New("HEYAIRA_PUBLIC_URL must be an absolute http or https URL without user, query or fragment")
	}
	return strings.TrimRight(v, "/"), nil
}
