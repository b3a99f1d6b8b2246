package admin_test

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"heyaira/admin"
	"heyaira/store"

	"github.com/google/go-cmp/cmp"
)

// legacyToken issues a legacy token through the CLI and returns its id and secret.
func (h *harness) legacyToken(project, name string, extra ...string) (id, secret string) {
	h.t.Helper()
	m := h.changeJSON(append([]string{"issue-legacy-token", "--project-id", project, "--name", name}, extra...)...).(map[string]any)
	return m["id"].(string), m["token"].(string)
}

// legacyWorks reports whether the token authenticates at the given time.
func (h *harness) legacyWorks(secret string, at time.Time) bool {
	h.t.Helper()
	sum := sha256.Sum256([]byte(secret))
	_, err := h.db.Authenticate(h.t.Context(), sum[:], at)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		h.t.Fatal(err)
	}
	return err == nil
}

// TestLT01OffboardingNamesLiveLegacyTokens: disable-principal and
// remove-member leave a project's legacy tokens working (they belong to the
// project), so both name every live one, with the command that revokes it,
// in text and in --json, and warn on stderr; remove-member says so loudly
// when it removes a project's last member. The printed command works.
func TestLT01OffboardingNamesLiveLegacyTokens(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	f := h.fixture()
	shared := f.project // keeps another member
	alone := h.id("create-project", "--account-id", f.account, "--name", "Alone")
	colleague := h.id("create-principal", "--account-id", f.account, "--name", "Grace")
	for _, m := range [][2]string{{shared, f.principal}, {shared, colleague}, {alone, f.principal}} {
		h.change("add-member", "--project-id", m[0], "--principal-id", m[1])
	}
	ci, ciSecret := h.legacyToken(shared, "ci runner")
	revoked, _ := h.legacyToken(shared, "revoked")
	h.change("revoke-token", "--legacy-token-id", revoked)
	expired, _ := h.legacyToken(shared, "expired")
	if _, err := h.db.SQL().ExecContext(t.Context(), `UPDATE legacy_tokens
		SET created_at = now() - interval '2 days', expires_at = now() - interval '1 day' WHERE id = $1`, expired); err != nil {
		t.Fatal(err)
	}
	bot, botSecret := h.legacyToken(alone, "bot", "--expires-in", "30d")
	other, _ := h.legacyToken(h.id("create-project", "--account-id", f.account, "--name", "Unrelated"), "theirs")
	names := map[string]string{f.principal: "<principal>", f.account: "<account>", shared: "<shared>", alone: "<alone>",
		ci: "<ci>", bot: "<bot>", other: "<other>", revoked: "<revoked>", expired: "<expired>"}
	notice := func(id, project, name string, expires any) map[string]any {
		return map[string]any{"id": names[id], "project_id": project, "name": name, "expires_at": expires,
			"revoke_command": "heyaira-admin revoke-token --legacy-token-id " + id}
	}
	tokensWarning := "2 live legacy token(s) still work: they belong to the project, not to the person; " +
		"revoke each one the person knew (listed on stdout, or live_legacy_tokens in --json)"

	// disable-principal, text: the line of each live token of the person's
	// projects, in project order, then the same on stderr as a warning.
	stdout, stderr, err := h.run("disable-principal", "--principal-id", f.principal)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{ci, bot} {
		if !strings.Contains(stdout, "live legacy token "+id+" of project ") ||
			!strings.Contains(stdout, ": heyaira-admin revoke-token --legacy-token-id "+id+"\n") {
			t.Errorf("disable-principal does not name live token %s:\n%s", id, stdout)
		}
	}
	for _, id := range []string{revoked, expired, other} {
		if strings.Contains(stdout, id) {
			t.Errorf("disable-principal names token %s, which is not live or not the person's project's:\n%s", id, stdout)
		}
	}
	if want := "heyaira-admin: disable-principal: warning: " + tokensWarning + "\n"; stderr != want {
		t.Errorf("disable-principal stderr = %q, want %q", stderr, want)
	}
	// disable-principal --json, after enable-principal.
	h.change("enable-principal", "--principal-id", f.principal)
	got := h.changeJSON("disable-principal", "--principal-id", f.principal).(map[string]any)
	wantTokens := []any{notice(ci, "<shared>", "ci runner", nil), notice(bot, "<alone>", "bot", "<time>")}
	if alone < shared { // ordered by project id
		wantTokens[0], wantTokens[1] = wantTokens[1], wantTokens[0]
	}
	if diff := cmp.Diff(wantTokens, normalize(got["live_legacy_tokens"], names)); diff != "" {
		t.Errorf("disable-principal live_legacy_tokens (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]any{tokensWarning}, got["warnings"]); diff != "" {
		t.Errorf("disable-principal warnings (-want +got):\n%s", diff)
	}

	// remove-member where a colleague stays: the project's token, no last-member warning.
	got = h.changeJSON("remove-member", "--project-id", shared, "--principal-id", f.principal).(map[string]any)
	if diff := cmp.Diff([]any{notice(ci, "<shared>", "ci runner", nil)}, normalize(got["live_legacy_tokens"], names)); diff != "" {
		t.Errorf("remove-member live_legacy_tokens (-want +got):\n%s", diff)
	}
	if got["members_left"] != num("1") || len(got["warnings"].([]any)) != 1 {
		t.Errorf("remove-member with a member left: members_left %v, warnings %v", got["members_left"], got["warnings"])
	}
	// remove-member of the last member, text: loud.
	stdout, stderr, err = h.run("remove-member", "--project-id", alone, "--principal-id", f.principal)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr, "heyaira-admin: remove-member: warning: project "+alone+" has no members left: "+
		"only its 1 live legacy token(s) can reach it now") {
		t.Errorf("remove-member of the last member: stderr %q", stderr)
	}
	line := "live legacy token " + bot + " of project " + alone + ` (name "bot", expires `
	if !strings.Contains(stdout, line) {
		t.Fatalf("remove-member stdout lacks %q:\n%s", line, stdout)
	}
	// The audit rows count what was left live.
	events := h.read("audit", "--account-id", f.account).(map[string]any)["events"].([]any)
	left := map[string]any{}
	for _, e := range events {
		e := e.(map[string]any)
		if d, ok := e["details"].(map[string]any); ok && d["live_legacy_tokens"] != nil {
			left[fmt.Sprint(e["action"], " ", e["project_id"])] = d["live_legacy_tokens"]
		}
	}
	wantLeft := map[string]any{"principal.disable <nil>": num("2"), "project_member.remove " + shared: num("1"),
		"project_member.remove " + alone: num("1")}
	if diff := cmp.Diff(wantLeft, left); diff != "" {
		t.Errorf("audit details live_legacy_tokens (-want +got):\n%s", diff)
	}

	// The printed command, run as printed, ends the token; the other still works.
	if !h.legacyWorks(botSecret, time.Now()) || !h.legacyWorks(ciSecret, time.Now()) {
		t.Fatal("a live legacy token does not authenticate")
	}
	command := stdout[strings.Index(stdout, "heyaira-admin revoke-token"):]
	h.change(strings.Fields(command)[1:]...)
	if h.legacyWorks(botSecret, time.Now()) || !h.legacyWorks(ciSecret, time.Now()) {
		t.Error("the printed revoke-token command did not revoke exactly its token")
	}
}

// TestLT02IssueLegacyTokenExpiresIn: --expires-in sets an expiry that
// authentication enforces; list-grants shows it; bad values are usage
// errors that write nothing.
func TestLT02IssueLegacyTokenExpiresIn(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	f := h.fixture()
	m := h.changeJSON("issue-legacy-token", "--project-id", f.project, "--name", "ci", "--expires-in", "36h").(map[string]any)
	created, _ := time.Parse(time.RFC3339Nano, m["created_at"].(string))
	expires, err := time.Parse(time.RFC3339Nano, fmt.Sprint(m["expires_at"]))
	if err != nil || expires.Sub(created).Round(time.Second) != 36*time.Hour {
		t.Fatalf("expires_at %v, created_at %v: want 36h later", m["expires_at"], m["created_at"])
	}
	secret := m["token"].(string)
	if !h.legacyWorks(secret, time.Now()) || h.legacyWorks(secret, time.Now().Add(37*time.Hour)) {
		t.Error("the token does not work now, or still works after its expiry")
	}
	_, stderr, err := h.run("issue-legacy-token", "--project-id", f.project, "--name", "days", "--expires-in", "90d")
	if err != nil || !strings.Contains(stderr, ", expires 20") {
		t.Errorf("issue-legacy-token --expires-in 90d: %v, stderr %q", err, stderr)
	}
	if out := h.must("list-grants", "--project-id", f.project); !strings.Contains(out, "EXPIRES") {
		t.Errorf("list-grants text has no EXPIRES column:\n%s", out)
	}
	for _, v := range []string{"", "0", "30s", "-5m", "1.5d", "3661d", "99999d", "abc", "10 d"} {
		before := h.counts()
		_, _, err := h.run("issue-legacy-token", "--project-id", f.project, "--name", "x", "--expires-in", v)
		if !errors.Is(err, admin.ErrUsage) || !strings.Contains(err.Error(), "--expires-in must be days such as 90d") {
			t.Errorf("--expires-in %q: %v, want the usage error", v, err)
		}
		if diff := cmp.Diff(before, h.counts()); diff != "" {
			t.Errorf("--expires-in %q changed rows:\n%s", v, diff)
		}
	}
}
