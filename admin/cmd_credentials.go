package admin

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"heyaira/store"
)

// This file holds the credential commands: issue-legacy-token, list-grants,
// revoke-grant and revoke-token.

func runIssueLegacyToken(ctx context.Context, e *env, args []string) error {
	f := e.flags()
	project := f.String("project-id", "", "the project `id`")
	name := f.String("name", "", "a `name` that says who holds the token (1 to 200 characters)")
	expiresIn := f.String("expires-in", "", "optional: the token stops working this `long` after it is issued, "+
		"in days (90d) or as a Go duration (36h, 90m); at least 1m, at most 3660d; without it, never")
	if err := f.parse(args); err != nil {
		return err
	}
	lifetime, lifetimeErr := parseLifetime(*expiresIn, f.isSet("expires-in"))
	if err := f.check(needUUID("project-id", *project), needName("name", *name), lifetimeErr); err != nil {
		return err
	}
	token, hash := newSecret(legacyTokenPrefix)
	db, err := e.open(ctx, false)
	if err != nil {
		return failed(e.cmd.Name, err)
	}
	// Legacy tokens carry the memory/task scopes only; the schema refuses any other.
	t, err := db.IssueLegacyToken(ctx, store.NewLegacyToken{ProjectID: *project, Name: *name,
		TokenHash: hash, Scopes: store.LegacyScopes, ExpiresIn: lifetime})
	if err != nil {
		return failed(e.cmd.Name, err)
	}
	out := struct {
		store.LegacyToken
		Token string `json:"token"`
	}{t, token}
	return f.output(out, func(w io.Writer) {
		fmt.Fprintln(w, token)
		fmt.Fprintf(e.stderr, "%s: legacy token %s for project %s (scopes %s, expires %s); it is shown only once\n",
			e.prog, t.ID, t.ProjectID, strings.Join(t.Scopes, " "), expiry(t.ExpiresAt))
	})
}

func runListGrants(ctx context.Context, e *env, args []string) error {
	f, project, db, err := e.byID(ctx, args, "project-id", "the project `id`")
	if err != nil {
		return err
	}
	grants, err := db.ListGrants(ctx, project)
	if err != nil {
		return failed(e.cmd.Name, err)
	}
	legacy, err := db.ListLegacyTokens(ctx, project)
	if err != nil {
		return failed(e.cmd.Name, err)
	}
	out := struct {
		ProjectID    string               `json:"project_id"`
		Grants       []store.GrantSummary `json:"grants"`
		LegacyTokens []store.LegacyToken  `json:"legacy_tokens"`
	}{project, grants, legacy}
	return f.output(out, func(w io.Writer) {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "GRANT ID\tCLIENT\tPRINCIPAL\tSCOPES\tCREATED\tREVOKED\tACTIVE TOKENS")
		for _, g := range grants {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\n", g.ID, printable(quoteEmpty(g.ClientName)), printable(g.PrincipalName),
				strings.Join(g.Scopes, " "), stamp(&g.CreatedAt), stamp(g.RevokedAt), len(g.ActiveTokens))
		}
		fmt.Fprintln(tw)
		fmt.Fprintln(tw, "LEGACY TOKEN ID\tNAME\tSCOPES\tCREATED\tEXPIRES\tREVOKED")
		for _, t := range legacy {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", t.ID, printable(t.Name), strings.Join(t.Scopes, " "),
				stamp(&t.CreatedAt), expiry(t.ExpiresAt), stamp(t.RevokedAt))
		}
		tw.Flush()
	})
}

func runRevokeGrant(ctx context.Context, e *env, args []string) error {
	f, grant, db, err := e.byID(ctx, args, "grant-id", "the OAuth grant `id` (see list-grants)")
	if err != nil {
		return err
	}
	r, err := db.RevokeGrant(ctx, grant)
	if err != nil {
		return failed(e.cmd.Name, err)
	}
	return f.output(r, func(w io.Writer) {
		fmt.Fprintf(w, "revoked grant %s and %d token(s)\n", r.ID, r.TokensRevoked)
	})
}

func runRevokeToken(ctx context.Context, e *env, args []string) error {
	f := e.flags()
	token := f.String("token-id", "", "an OAuth token `id` (see list-grants --json); a refresh token takes its family with it")
	legacy := f.String("legacy-token-id", "", "a legacy token `id` (see list-grants)")
	if err := f.parse(args); err != nil {
		return err
	}
	checks := []error{f.exactlyOne("token-id", "legacy-token-id")}
	if f.isSet("token-id") {
		checks = append(checks, needUUID("token-id", *token))
	}
	if f.isSet("legacy-token-id") {
		checks = append(checks, needUUID("legacy-token-id", *legacy))
	}
	if err := f.check(checks...); err != nil {
		return err
	}
	db, err := e.open(ctx, false)
	if err != nil {
		return failed(e.cmd.Name, err)
	}
	var r store.Revocation
	if *legacy != "" {
		t, err := db.RevokeLegacyToken(ctx, *legacy)
		if err != nil {
			return failed(e.cmd.Name, err)
		}
		r = store.Revocation{ID: t.ID, Kind: "legacy", ProjectID: t.ProjectID, RevokedAt: *t.RevokedAt, TokensRevoked: 1}
	} else if r, err = db.RevokeOAuthToken(ctx, *token); err != nil {
		return failed(e.cmd.Name, err)
	}
	return f.output(r, func(w io.Writer) {
		fmt.Fprintf(w, "revoked %s token %s (%d token(s) in all)\n", r.Kind, r.ID, r.TokensRevoked)
	})
}

// expiry formats a legacy token's optional expiry for text output.
func expiry(t *time.Time) string {
	if t == nil {
		return "never"
	}
	return stamp(t)
}

// stamp formats an optional time for text output.
func stamp(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

func quoteEmpty(s string) string {
	if s == "" {
		return `""`
	}
	return s
}
