package admin_test

import (
	"os"
	"strings"
	"testing"
	"time"
)

// offboardingSteps returns the heyaira-admin command lines of the sh blocks
// of docs/admin.md's "Offboarding a person" section, in order.
func offboardingSteps(t *testing.T) [][]string {
	t.Helper()
	b, err := os.ReadFile("../docs/admin.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	start := strings.Index(doc, "\n## Offboarding a person\n")
	if start < 0 {
		t.Fatal(`docs/admin.md has no "## Offboarding a person" section`)
	}
	section := doc[start+1:]
	if end := strings.Index(section[3:], "\n## "); end >= 0 {
		section = section[:end+3]
	}
	var steps [][]string
	inBlock := false
	for _, line := range strings.Split(section, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "```sh":
			inBlock = true
		case line == "```":
			inBlock = false
		case inBlock && strings.HasPrefix(line, "heyaira-admin "):
			steps = append(steps, strings.Fields(line)[1:])
		}
	}
	return steps
}

// TestDocsOffboarding runs the offboarding steps of docs/admin.md, as
// written, against a real database where the person has a grant with
// tokens in two projects, a browser session, an unredeemed sign-in link and
// a legacy token of one project, and checks each claim the section makes
// about the outputs.
// Rows LC-07, LC-09, LT-01 (docs/security-tests.md).
func TestDocsOffboarding(t *testing.T) {
	t.Parallel()
	steps := offboardingSteps(t)
	var names []string
	for _, s := range steps {
		names = append(names, s[0])
	}
	if got := strings.Join(names, " "); got != "list-principals disable-principal remove-member revoke-token audit list-grants" {
		t.Fatalf("offboarding steps = %q", got)
	}
	h := newHarness(t)
	f := h.fixture()
	other := h.id("create-project", "--account-id", f.account, "--name", "Other")
	projects := []string{f.project, other}
	grants := map[string]string{}
	for _, p := range projects {
		h.change("add-member", "--project-id", p, "--principal-id", f.principal)
		_, grants[p], _, _, _ = h.oauthRows(fixture{project: p, principal: f.principal})
	}
	h.session(f.principal)
	h.pendingLink(f.principal)
	legacy, legacySecret := h.legacyToken(other, "shared bot")

	// run runs one documented step with its placeholders filled in; arg
	// is the project or the legacy token the step is for.
	run := func(step []string, arg string) any {
		t.Helper()
		args := make([]string, len(step))
		for i, a := range step {
			args[i] = strings.NewReplacer("<account-id>", f.account, "<principal-id>", f.principal,
				"<project-id>", arg, "<legacy-token-id>", arg).Replace(a)
		}
		if args[len(args)-1] == "--json" {
			args = args[:len(args)-1]
		}
		var v any
		h.mustJSON(&v, args...)
		return v
	}
	// Step 1: the person's entry gives its id and projects.
	entry := principalEntry(t, run(steps[0], ""), f.principal)
	ids, _ := entry["project_ids"].([]any)
	if len(ids) != 2 || ids[0] != f.project || ids[1] != other {
		t.Fatalf("project_ids = %v, want both projects", entry["project_ids"])
	}
	// Steps 2 and 3 name the live legacy token, which step 4 revokes.
	live := run(steps[1], "").(map[string]any)["live_legacy_tokens"].([]any)
	for _, p := range ids {
		run(steps[2], p.(string))
	}
	if len(live) != 1 || live[0].(map[string]any)["id"] != legacy {
		t.Fatalf("disable-principal live_legacy_tokens = %v, want the one legacy token", live)
	}
	if !h.legacyWorks(legacySecret, time.Now()) {
		t.Fatal("the legacy token stopped working before step 4")
	}
	for _, l := range live {
		run(steps[3], l.(map[string]any)["id"].(string))
	}
	if h.legacyWorks(legacySecret, time.Now()) {
		t.Error("the legacy token still works after step 4")
	}
	// Step 5: the proof.
	events := run(steps[4], "").(map[string]any)["events"].([]any)
	disables, removes := 0, map[string]int{}
	for _, e := range events {
		e := e.(map[string]any)
		switch {
		case e["action"] == "principal.disable" && e["target"] == f.principal:
			disables++
			d := e["details"].(map[string]any)
			if d["grants_revoked"] != num("2") || d["tokens_revoked"] != num("6") ||
				d["sessions_revoked"] != num("1") || d["signin_links_revoked"] != num("1") {
				t.Errorf("principal.disable details = %v", d)
			}
		case e["action"] == "project_member.remove" && e["target"] == f.principal:
			removes[e["project_id"].(string)]++
		}
	}
	if disables != 1 || removes[f.project] != 1 || removes[other] != 1 {
		t.Errorf("audit: %d principal.disable rows, project_member.remove per project %v; want 1 and 1 each", disables, removes)
	}
	for _, p := range projects {
		listed := run(steps[5], p).(map[string]any)
		for _, l := range listed["legacy_tokens"].([]any) {
			if l.(map[string]any)["revoked_at"] == nil {
				t.Errorf("project %s: legacy token still live: %v", p, l)
			}
		}
		list := listed["grants"].([]any)
		mine := 0
		for _, g := range list {
			g := g.(map[string]any)
			if g["principal_id"] != f.principal {
				continue
			}
			mine++
			if g["revoked_at"] == nil || len(g["active_tokens"].([]any)) != 0 || len(g["families"].([]any)) != 0 {
				t.Errorf("project %s: grant still live: %v", p, g)
			}
		}
		if mine != 1 {
			t.Errorf("project %s: list-grants shows %d grants of the person, want 1", p, mine)
		}
	}
	if n := h.liveTokens(grants[f.project]) + h.liveTokens(grants[other]); n != 0 {
		t.Errorf("%d tokens still live in the database", n)
	}
	entry = principalEntry(t, run(steps[0], ""), f.principal)
	if entry["disabled_at"] == nil || entry["live_grants"] != num("0") || entry["live_sessions"] != num("0") ||
		len(entry["project_ids"].([]any)) != 0 {
		t.Errorf("list-principals after offboarding = %v", entry)
	}
}

func principalEntry(t *testing.T, list any, id string) map[string]any {
	t.Helper()
	for _, u := range list.([]any) {
		if u := u.(map[string]any); u["id"] == id {
			return u
		}
	}
	t.Fatalf("list-principals has no principal %s", id)
	return nil
}
