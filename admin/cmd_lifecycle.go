package admin

import (
	"context"
	"fmt"
	"io"
	"time"

	"heyaira/store"
)

// This file holds the offboarding commands: remove-member,
// disable-principal, enable-principal and revoke-sessions; docs/admin.md
// "Offboarding a person" says how they combine.

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
		return out.print(f, out, fmt.Sprintf("principal %s is no longer a member of project %s; revoked %d grant(s), "+
			"%d token(s) and %d unused sign-in link(s)", r.PrincipalID, r.ProjectID, r.GrantsRevoked, r.TokensRevoked,
			r.LinksRevoked))
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
		return out.print(f, out, fmt.Sprintf("disabled principal %s; revoked %d grant(s), %d token(s), %d session(s), "+
			"%d sign-in link(s)", c.PrincipalID, c.GrantsRevoked, c.TokensRevoked, c.SessionsRevoked, c.LinksRevoked))
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

// legacyNotice is one live legacy token as remove-member and
// disable-principal print it.
type legacyNotice struct {
	ID            string     `json:"id"`
	ProjectID     string     `json:"project_id"`
	Name          string     `json:"name"`
	ExpiresAt     *time.Time `json:"expires_at"`
	RevokeCommand string     `json:"revoke_command"`
}

// offboardingReport is the part of remove-member's and disable-principal's
// output that says what is still live. Legacy tokens belong to a project, not
// to a person, so these commands cannot revoke them on the person's behalf:
// they name each live one of the projects concerned with the command that
// revokes it, and warn on stderr, so the administrator decides token by token.
type offboardingReport struct {
	LiveLegacyTokens []legacyNotice `json:"live_legacy_tokens"`
	Warnings         []string       `json:"warnings"`
}

// newOffboardingReport names the live tokens and, if any, warns that they
// still work; the caller appends its own warnings.
func newOffboardingReport(tokens []store.LegacyToken) offboardingReport {
	r := offboardingReport{LiveLegacyTokens: []legacyNotice{}, Warnings: []string{}}
	for _, t := range tokens {
		r.LiveLegacyTokens = append(r.LiveLegacyTokens, legacyNotice{ID: t.ID, ProjectID: t.ProjectID,
			Name: t.Name, ExpiresAt: t.ExpiresAt, RevokeCommand: "heyaira-admin revoke-token --legacy-token-id " + t.ID})
	}
	if n := len(tokens); n > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%d live legacy token(s) still work: they belong to the project, "+
			"not to the person; revoke each one the person knew (listed on stdout, or live_legacy_tokens in --json)", n))
	}
	return r
}

// print prints the warnings on stderr, whatever the output format; then out,
// the command's whole result, as JSON or as line and one line per live token.
func (r offboardingReport) print(f *flags, out any, line string) error {
	for _, w := range r.Warnings {
		fmt.Fprintf(f.e.stderr, "%s: %s: warning: %s\n", f.e.prog, f.e.cmd.Name, w)
	}
	return f.output(out, nil, func(w io.Writer) {
		fmt.Fprintln(w, line)
		for _, t := range r.LiveLegacyTokens {
			fmt.Fprintf(w, "live legacy token %s of project %s (name %q, expires %s): %s\n",
				t.ID, t.ProjectID, printable(t.Name), expiry(t.ExpiresAt), t.RevokeCommand)
		}
	})
}
