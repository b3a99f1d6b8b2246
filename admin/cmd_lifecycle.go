package admin

import (
	"context"
	"fmt"
	"io"

	"heyaira/store"
)

// This file holds the offboarding commands: remove-member,
// disable-principal, enable-principal and revoke-sessions. Each is one store
// transaction with its audit row; docs/admin.md "Offboarding a person" says
// how they combine. remove-member and disable-principal also name the live
// legacy tokens they leave (legacy_notice.go).

func runRemoveMember(ctx context.Context, e *env, args []string) error {
	f := e.flags()
	project := f.String("project-id", "", "the project `id`")
	principal := f.String("principal-id", "", "the `id` of the member to remove")
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
	r, err := db.RemoveMember(ctx, *project, *principal)
	if err != nil {
		return failed(e.cmd.Name, err)
	}
	out := struct {
		store.MemberRemoval
		offboardingReport
	}{r, newOffboardingReport(r.LiveLegacyTokens)}
	if r.MembersLeft == 0 {
		out.Warnings = append(out.Warnings, fmt.Sprintf("project %s has no members left: only its %d live legacy token(s) "+
			"can reach it now, and nobody can approve a new client for it", r.ProjectID, len(r.LiveLegacyTokens)))
	}
	out.warn(e)
	return f.output(out, func(w io.Writer) {
		fmt.Fprintf(w, "principal %s is no longer a member of project %s; revoked %d grant(s), %d token(s) and %d unused sign-in link(s)\n",
			r.PrincipalID, r.ProjectID, r.GrantsRevoked, r.TokensRevoked, r.LinksRevoked)
		out.text(w)
	})
}

func runDisablePrincipal(ctx context.Context, e *env, args []string) error {
	f, principal, db, err := e.byID(ctx, args, "principal-id", "the principal `id`")
	if err != nil {
		return err
	}
	c, err := db.DisablePrincipal(ctx, principal)
	if err != nil {
		return failed(e.cmd.Name, err)
	}
	out := struct {
		store.PrincipalChange
		offboardingReport
	}{c, newOffboardingReport(c.LiveLegacyTokens)}
	out.warn(e)
	return f.output(out, func(w io.Writer) {
		fmt.Fprintf(w, "disabled principal %s; revoked %d grant(s), %d token(s), %d session(s), %d sign-in link(s)\n",
			c.PrincipalID, c.GrantsRevoked, c.TokensRevoked, c.SessionsRevoked, c.LinksRevoked)
		out.text(w)
	})
}

func runEnablePrincipal(ctx context.Context, e *env, args []string) error {
	return principalChange(ctx, e, args, (*store.DB).EnablePrincipal, func(w io.Writer, c store.PrincipalChange) {
		fmt.Fprintf(w, "enabled principal %s: it may sign in again; no grant was restored\n", c.PrincipalID)
	})
}

func runRevokeSessions(ctx context.Context, e *env, args []string) error {
	return principalChange(ctx, e, args, (*store.DB).RevokeSessions, func(w io.Writer, c store.PrincipalChange) {
		fmt.Fprintf(w, "revoked %d browser session(s) of principal %s\n", c.SessionsRevoked, c.PrincipalID)
	})
}

// principalChange is a command whose only flag is --principal-id and whose
// output is the PrincipalChange alone.
func principalChange(ctx context.Context, e *env, args []string,
	change func(*store.DB, context.Context, string) (store.PrincipalChange, error),
	text func(io.Writer, store.PrincipalChange)) error {
	f, principal, db, err := e.byID(ctx, args, "principal-id", "the principal `id`")
	if err != nil {
		return err
	}
	c, err := change(db, ctx, principal)
	if err != nil {
		return failed(e.cmd.Name, err)
	}
	return f.output(c, func(w io.Writer) { text(w, c) })
}
