package admin

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"heyaira/oauth"
	"heyaira/store"
)

// This file holds the credential commands: issue-legacy-token, list-grants,
// revoke-grant and revoke-token.

func runIssueLegacyToken(f *flags) action {
	e := f.e
	project := f.id("project-id", "the project `id`")
	name := f.str("name", "a `name` that says who holds the token (1 to 200 characters)", needName)
	var lifetime time.Duration // without --expires-in, none
	f.optional("expires-in", "optional: the token stops working this `long` after it is issued, "+
		"in days (90d) or as a Go duration (36h, 90m); at least 1m, at most 3660d; without it, never",
		func(_, v string) (err error) {
			lifetime, err = parseLifetime(v)
			return err
		})
	secrets := f.secrets()
	return func(ctx context.Context, db *store.DB) error {
		var expires time.Time
		if lifetime > 0 {
			expires = time.Now().Add(lifetime + mintSlack)
		}
		token := secrets().Mint(oauth.PrefixLegacy, expires) // printed once; the store keeps its hash
		// Legacy tokens carry the memory/task scopes only; the schema refuses any other.
		t, err := db.IssueLegacyToken(ctx, store.NewLegacyToken{ProjectID: *project, Name: *name,
			TokenHash: oauth.Hash(token), Scopes: store.LegacyScopes, ExpiresIn: lifetime})
		out := struct {
			store.LegacyToken
			Token string `json:"token"`
		}{t, token}
		return f.output(out, err, func(w io.Writer) {
			fmt.Fprintln(w, token)
			fmt.Fprintf(e.stderr, "%s: legacy token %s for project %s (scopes %s, expires %s); it is shown only once\n",
				e.prog, t.ID, t.ProjectID, strings.Join(t.Scopes, " "), expiry(t.ExpiresAt))
		})
	}
}

// runListLegacyReissue lists, across projects, the live legacy tokens that
// the server refuses since it checks every token's MAC (docs/operating.md,
// "Upgrade"), with the commands that replace each.
func runListLegacyReissue(f *flags) action {
	return func(ctx context.Context, db *store.DB) error {
		list, err := db.ListLegacyReissue(ctx)
		return f.output(list, err, func(w io.Writer) {
			table(w, "LEGACY TOKEN ID\tPROJECT ID\tNAME\tCREATED\tEXPIRES", list, func(t store.LegacyToken) string {
				return fmt.Sprintf("%s\t%s\t%s\t%s\t%s", t.ID, t.ProjectID, printable(t.Name), stamp(&t.CreatedAt), expiry(t.ExpiresAt))
			})
			for _, t := range list {
				fmt.Fprintf(w, "\nre-issue: heyaira-admin issue-legacy-token --project-id %s --name %s\n"+
					"then:     heyaira-admin revoke-token --legacy-token-id %s\n", t.ProjectID, shellQuote(t.Name), t.ID)
			}
		})
	}
}

func runListGrants(f *flags) action {
	project := f.id("project-id", "the project `id`")
	return func(ctx context.Context, db *store.DB) error {
		grants, err := db.ListGrants(ctx, *project)
		if err != nil {
			return err
		}
		legacy, err := db.ListLegacyTokens(ctx, *project)
		out := struct {
			ProjectID    string               `json:"project_id"`
			Grants       []store.GrantSummary `json:"grants"`
			LegacyTokens []store.LegacyToken  `json:"legacy_tokens"`
		}{*project, grants, legacy}
		return f.output(out, err, func(w io.Writer) {
			table(w, "GRANT ID\tCLIENT\tPRINCIPAL\tSCOPES\tCREATED\tREVOKED\tACTIVE TOKENS", grants,
				func(g store.GrantSummary) string {
					return fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s\t%d", g.ID, printable(cmp.Or(g.ClientName, `""`)),
						printable(g.PrincipalName), strings.Join(g.Scopes, " "), stamp(&g.CreatedAt), stamp(g.RevokedAt),
						len(g.ActiveTokens))
				})
			fmt.Fprintln(w)
			table(w, "LEGACY TOKEN ID\tNAME\tSCOPES\tCREATED\tEXPIRES\tREVOKED", legacy, func(t store.LegacyToken) string {
				return fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s", t.ID, printable(t.Name), strings.Join(t.Scopes, " "),
					stamp(&t.CreatedAt), expiry(t.ExpiresAt), stamp(t.RevokedAt))
			})
		})
	}
}

var runRevokeGrant = byID("grant-id", "the OAuth grant `id` (see list-grants)", (*store.DB).RevokeGrant,
	func(w io.Writer, r store.Revocation) {
		fmt.Fprintf(w, "revoked grant %s and %d token(s)\n", r.ID, r.TokensRevoked)
	})

func runRevokeToken(f *flags) action {
	f.exactlyOne("token-id", "legacy-token-id")
	token := f.optional("token-id", "an OAuth token `id` (see list-grants --json); a refresh token takes its family with it",
		needUUID)
	legacy := f.optional("legacy-token-id", "a legacy token `id` (see list-grants)", needUUID)
	return func(ctx context.Context, db *store.DB) (err error) {
		var r store.Revocation
		if *legacy != "" {
			var t store.LegacyToken
			if t, err = db.RevokeLegacyToken(ctx, *legacy); err == nil {
				r = store.Revocation{ID: t.ID, Kind: "legacy", ProjectID: t.ProjectID, RevokedAt: *t.RevokedAt, TokensRevoked: 1}
			}
		} else {
			r, err = db.RevokeOAuthToken(ctx, *token)
		}
		return f.output(r, err, func(w io.Writer) {
			fmt.Fprintf(w, "revoked %s token %s (%d token(s) in all)\n", r.Kind, r.ID, r.TokensRevoked)
		})
	}
}
