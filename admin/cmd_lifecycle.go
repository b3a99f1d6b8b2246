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

func runRemoveMember(f *flags) action {
	project := f.id("project-id", "the project `id`")
	principal := f.id("principal-id", "the `id` of the member to remove")
	return func(ctx context.Context, db *store.DB) error {
		r, err := db.RemoveMember(ctx, *project, *principal)
		if err != nil {
			return err
		}
		out := struct {
			store.MemberRemoval
			offboardingReport
		}{r, newOffboardingReport(r.LiveLegacyTokens)}
		if r.MembersLeft == 0 {
			out.Warnings = append(out.Warnings, fmt.Sprintf("project %s has no members left: only its %d live legacy "+
				"token(s) can reach it now, and nobody can approve a new client for it", r.ProjectID, len(r.LiveLegacyTokens)))
		}
		out.warn(f.e)
		return f.output(out, nil, func(w io.Writer) {
			fmt.Fprintf(w, "principal %s is no longer a member of project %s; revoked %d grant(s), %d token(s) and %d "+
				"unused sign-in link(s)\n", r.PrincipalID, r.ProjectID, r.GrantsRevoked, r.TokensRevoked, r.LinksRevoked)
			out.text(w)
		})
	}
}

func runDisablePrincipal(f *flags) action {
	principal := f.id("principal-id", "the principal `id`")
	return func(ctx context.Context, db *store.DB) error {
		c, err := db.DisablePrincipal(ctx, *principal)
		if err != nil {
			return err
		}
		out := struct {
			store.PrincipalChange
			offboardingReport
		}{c, newOffboardingReport(c.LiveLegacyTokens)}
		out.warn(f.e)
		return f.output(out, nil, func(w io.Writer) {
			fmt.Fprintf(w, "disabled principal %s; revoked %d grant(s), %d token(s), %d session(s), %d sign-in link(s)\n",
				c.PrincipalID, c.GrantsRevoked, c.TokensRevoked, c.SessionsRevoked, c.LinksRevoked)
			out.text(w)
		})
	}
}

var runEnablePrincipal = byID("principal-id", "the principal `id`", (*store.DB).EnablePrincipal,
	func(w io.Writer, c store.PrincipalChange) {
		fmt.Fprintf(w, "enabled principal %s: it may sign in again; no grant was restored\n", c.PrincipalID)
	})

var runRevokeSessions = byID("principal-id", "the principal `id`", (*store.DB).RevokeSessions,
	func(w io.Writer, c store.PrincipalChange) {
		fmt.Fprintf(w, "revoked %d browser session(s) of principal %s\n", c.SessionsRevoked, c.PrincipalID)
	})

// byID is a command whose only flag is the id name: it gives the id to call
// and prints what call returns.
func byID[T any](name, usage string, call func(*store.DB, context.Context, string) (T, error),
	text func(io.Writer, T)) func(*flags) action {
	return func(f *flags) action {
		id := f.id(name, usage)
		return func(ctx context.Context, db *store.DB) error {
			v, err := call(db, ctx, *id)
			return f.output(v, err, func(w io.Writer) { text(w, v) })
		}
	}
}
