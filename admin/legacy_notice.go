package admin

import (
	"fmt"
	"io"
	"time"

	"heyaira/store"
)

// This file says what offboarding leaves live: legacy tokens belong to a
// project, not to a person, so remove-member and disable-principal cannot
// revoke them on the person's behalf. Both commands name each live legacy
// token of the projects concerned with the command that revokes it, and
// warn on stderr, so the administrator decides token by token.

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
// output that says what is still live.
type offboardingReport struct {
	LiveLegacyTokens []legacyNotice `json:"live_legacy_tokens"`
	Warnings         []string       `json:"warnings"`
}

// newOffboardingReport names the live tokens and, when there are any,
// warns that they still work. The caller appends its own warnings.
func newOffboardingReport(tokens []store.LegacyToken) offboardingReport {
	r := offboardingReport{LiveLegacyTokens: []legacyNotice{}, Warnings: []string{}}
	for _, t := range tokens {
		r.LiveLegacyTokens = append(r.LiveLegacyTokens, legacyNotice{ID: t.ID, ProjectID: t.ProjectID,
			Name: t.Name, ExpiresAt: t.ExpiresAt, RevokeCommand: revokeLegacyCommand(t.ID)})
	}
	if n := len(tokens); n > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%d live legacy token(s) still work: they belong to the project, "+
			"not to the person; revoke each one the person knew (listed on stdout, or live_legacy_tokens in --json)", n))
	}
	return r
}

func revokeLegacyCommand(id string) string {
	return "heyaira-admin revoke-token --legacy-token-id " + id
}

// text prints one line per live legacy token, after the command's own line.
func (r offboardingReport) text(w io.Writer) {
	for _, t := range r.LiveLegacyTokens {
		fmt.Fprintf(w, "live legacy token %s of project %s (name %q, expires %s): %s\n",
			t.ID, t.ProjectID, printable(t.Name), expiry(t.ExpiresAt), t.RevokeCommand)
	}
}

// warn prints the warnings on stderr, one line each, whatever the output
// format: --json has them in "warnings" too.
func (r offboardingReport) warn(e *env) {
	for _, w := range r.Warnings {
		fmt.Fprintf(e.stderr, "%s: %s: warning: %s\n", e.prog, e.cmd.Name, w)
	}
}
