package admin_test

import (
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"strings"
	"testing"

	"heyaira/admin"
	"heyaira/store"

	"github.com/google/go-cmp/cmp"
)

// session gives the principal a live browser session and returns nothing
// secret: the link and session secrets are random and thrown away.
func (h *harness) session(principal string) {
	h.t.Helper()
	link, sess := randomHash(), randomHash()
	if _, err := h.db.CreateSigninLink(h.t.Context(), principal, link, store.SigninLinkTTL); err != nil {
		h.t.Fatal(err)
	}
	if _, err := h.db.RedeemSigninLink(h.t.Context(), link, sess, nil); err != nil {
		h.t.Fatal(err)
	}
}

// pendingLink makes an unredeemed sign-in link and returns its hash.
func (h *harness) pendingLink(principal string) []byte {
	h.t.Helper()
	link := randomHash()
	if _, err := h.db.CreateSigninLink(h.t.Context(), principal, link, store.SigninLinkTTL); err != nil {
		h.t.Fatal(err)
	}
	return link
}

func randomHash() []byte {
	h := sha256.Sum256([]byte(rand.Text()))
	return h[:]
}

// liveTokens counts the unrevoked tokens of a grant.
func (h *harness) liveTokens(grant string) int {
	h.t.Helper()
	var n int
	if err := h.db.SQL().QueryRowContext(h.t.Context(),
		`SELECT count(*) FROM oauth_tokens WHERE grant_id = $1 AND revoked_at IS NULL`, grant).Scan(&n); err != nil {
		h.t.Fatal(err)
	}
	return n
}

// TestLC01RemoveMember: remove-member ends the membership, revokes the
// pair's grant and tokens and the principal's unredeemed sign-in link,
// leaves the principal's other project alone and writes one audit row.
func TestLC01RemoveMember(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	f := h.fixture()
	h.change("add-member", "--project-id", f.project, "--principal-id", f.principal)
	_, grant, _, _, _ := h.oauthRows(f)
	other := h.id("create-project", "--account-id", f.account, "--name", "Other")
	h.change("add-member", "--project-id", other, "--principal-id", f.principal)
	_, otherGrant, _, _, _ := h.oauthRows(fixture{project: other, principal: f.principal})
	names := map[string]string{f.project: "<project>", f.principal: "<principal>", f.account: "<account>"}
	h.change("signin-link", "--principal-id", f.principal) // unredeemed: revoked with the membership

	got := h.changeJSON("remove-member", "--project-id", f.project, "--principal-id", f.principal)
	want := map[string]any{"project_id": "<project>", "principal_id": "<principal>", "account_id": "<account>",
		"removed_at": "<time>", "grants_revoked": num("1"), "tokens_revoked": num("3"), "signin_links_revoked": num("1"),
		"members_left": num("0"), "live_legacy_tokens": []any{},
		"warnings": []any{"project " + f.project + " has no members left: only its 0 live legacy token(s) can reach it now, " +
			"and nobody can approve a new client for it"}}
	if diff := cmp.Diff(want, normalize(got, names)); diff != "" {
		t.Errorf("remove-member --json (-want +got):\n%s", diff)
	}
	if members := h.read("list-members", "--project-id", f.project); !cmp.Equal(members, []any{}) {
		t.Errorf("list-members after remove-member = %v, want []", members)
	}
	if n := h.liveTokens(grant); n != 0 {
		t.Errorf("%d tokens of the removed pair are live", n)
	}
	if n := h.liveTokens(otherGrant); n != 3 {
		t.Errorf("the other project's grant has %d live tokens, want its 3", n)
	}
	events := h.read("audit", "--project-id", f.project).(map[string]any)["events"].([]any)
	last := events[len(events)-1].(map[string]any)
	if last["action"] != "project_member.remove" || last["target"] != f.principal {
		t.Errorf("last audit event = %v, want project_member.remove of the principal", last)
	}
	// The second removal is refused: no longer a member.
	before := h.counts()
	_, _, err := h.run("remove-member", "--project-id", f.project, "--principal-id", f.principal)
	if err == nil || !strings.Contains(err.Error(), "is not a member of project") {
		t.Errorf("second remove-member: %v", err)
	}
	if diff := cmp.Diff(before, h.counts()); diff != "" {
		t.Errorf("refused remove-member changed rows:\n%s", diff)
	}
	// add-member again works: membership is a row, not a flag.
	h.change("add-member", "--project-id", f.project, "--principal-id", f.principal)
}

// TestLC02DisableAndEnablePrincipal: disable-principal revokes everything
// the principal holds in every project and refuses new sign-in links;
// enable-principal restores sign-in only.
func TestLC02DisableAndEnablePrincipal(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	f := h.fixture()
	h.change("add-member", "--project-id", f.project, "--principal-id", f.principal)
	_, grant, _, _, _ := h.oauthRows(f)
	other := h.id("create-project", "--account-id", f.account, "--name", "Other")
	h.change("add-member", "--project-id", other, "--principal-id", f.principal)
	_, otherGrant, _, _, _ := h.oauthRows(fixture{project: other, principal: f.principal})
	h.session(f.principal)
	link := h.pendingLink(f.principal)
	names := map[string]string{f.principal: "<principal>", f.account: "<account>"}

	got := h.changeJSON("disable-principal", "--principal-id", f.principal)
	want := map[string]any{"principal_id": "<principal>", "account_id": "<account>", "disabled_at": "<time>",
		"grants_revoked": num("2"), "tokens_revoked": num("6"), "sessions_revoked": num("1"),
		"signin_links_revoked": num("1"), "live_legacy_tokens": []any{}, "warnings": []any{}}
	if diff := cmp.Diff(want, normalize(got, names)); diff != "" {
		t.Errorf("disable-principal --json (-want +got):\n%s", diff)
	}
	if h.liveTokens(grant)+h.liveTokens(otherGrant) != 0 {
		t.Error("tokens are live after disable-principal")
	}
	principals := h.read("list-principals", "--account-id", f.account).([]any)
	if p := principals[0].(map[string]any); p["disabled_at"] == nil || p["live_grants"] != num("0") || p["live_sessions"] != num("0") {
		t.Errorf("list-principals after disable = %v", p)
	}

	// Disabled: no new link, and the old one does not redeem.
	before := h.counts()
	if _, _, err := h.run("signin-link", "--principal-id", f.principal); err == nil ||
		!strings.Contains(err.Error(), "is disabled") {
		t.Errorf("signin-link for a disabled principal: %v", err)
	}
	if _, err := h.db.RedeemSigninLink(t.Context(), link, randomHash(), nil); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("redeem a link of a disabled principal: %v", err)
	}
	if diff := cmp.Diff(before, h.counts()); diff != "" {
		t.Errorf("refusals changed rows:\n%s", diff)
	}

	h.change("enable-principal", "--principal-id", f.principal)
	if _, err := h.db.RedeemSigninLink(t.Context(), link, randomHash(), nil); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a link revoked by disable-principal redeems after enable: %v", err)
	}
	h.change("signin-link", "--principal-id", f.principal)
	grants := h.read("list-grants", "--project-id", f.project).(map[string]any)["grants"].([]any)
	if g := grants[0].(map[string]any); g["revoked_at"] == nil || len(g["active_tokens"].([]any)) != 0 {
		t.Errorf("enable-principal revived the grant: %v", g)
	}
	events := h.read("audit", "--account-id", f.account).(map[string]any)["events"].([]any)
	var actions []string
	for _, e := range events {
		if a := e.(map[string]any)["action"].(string); strings.HasPrefix(a, "principal.") {
			actions = append(actions, a)
		}
	}
	if diff := cmp.Diff([]string{"principal.create", "principal.disable", "principal.enable"}, actions); diff != "" {
		t.Errorf("principal audit actions (-want +got):\n%s", diff)
	}
}

// TestLC03RevokeSessions ends browser sessions and nothing else.
// Row LC-04 (docs/security-tests.md).
func TestLC03RevokeSessions(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	f := h.fixture()
	h.change("add-member", "--project-id", f.project, "--principal-id", f.principal)
	_, grant, _, _, _ := h.oauthRows(f)
	h.session(f.principal)
	h.session(f.principal)
	h.session(f.stranger)
	got := h.changeJSON("revoke-sessions", "--principal-id", f.principal).(map[string]any)
	if got["sessions_revoked"] != num("2") || got["disabled_at"] != nil {
		t.Errorf("revoke-sessions = %v, want 2 sessions revoked", got)
	}
	if out := h.change("revoke-sessions", "--principal-id", f.principal); out != "revoked 0 browser session(s) of principal "+f.principal+"\n" {
		t.Errorf("second revoke-sessions printed %q", out)
	}
	if n := h.liveTokens(grant); n != 3 {
		t.Errorf("revoke-sessions touched tokens: %d live, want 3", n)
	}
	var live int
	if err := h.db.SQL().QueryRowContext(t.Context(), `SELECT count(*) FROM browser_sessions
		WHERE revoked_at IS NULL`).Scan(&live); err != nil || live != 1 {
		t.Errorf("live sessions = %d (%v), want the stranger's 1", live, err)
	}
}

// TestLC04ListCommands shows each list's --json: an array of objects, in
// creation order, [] when empty, and its text header.
// Row LC-08 (docs/security-tests.md).
func TestLC04ListCommands(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	if got := h.read("list-accounts"); !cmp.Equal(got, []any{}) {
		t.Errorf("list-accounts on an empty database = %v, want []", got)
	}
	f := h.fixture()
	h.change("add-member", "--project-id", f.project, "--principal-id", f.principal)
	h.oauthRows(f)
	h.session(f.principal)
	names := map[string]string{f.account: "<account>", f.project: "<project>", f.principal: "<principal>",
		f.otherAccount: "<other>", f.stranger: "<stranger>"}
	wantAccounts := []any{
		map[string]any{"id": "<account>", "name": "Acme", "created_at": "<time>", "projects": num("1"), "principals": num("1")},
		map[string]any{"id": "<other>", "name": "Other", "created_at": "<time>", "projects": num("0"), "principals": num("1")},
	}
	project := map[string]any{"id": "<project>", "account_id": "<account>", "name": "Continuity",
		"created_at": "<time>", "members": num("1")}
	principal := map[string]any{"id": "<principal>", "account_id": "<account>", "name": "Ada", "created_at": "<time>",
		"disabled_at": nil, "project_ids": []any{"<project>"}, "live_grants": num("1"), "live_sessions": num("1")}
	member := map[string]any{"project_id": "<project>", "principal_id": "<principal>", "principal_name": "Ada",
		"member_since": "<time>", "disabled_at": nil, "live_grants": num("1")}
	for _, c := range []struct {
		args []string
		want any
	}{
		{[]string{"list-accounts"}, wantAccounts},
		{[]string{"list-projects"}, []any{project}},
		{[]string{"list-projects", "--account-id", f.account}, []any{project}},
		{[]string{"list-projects", "--account-id", f.otherAccount}, []any{}},
		{[]string{"list-principals", "--account-id", f.account}, []any{principal}},
		{[]string{"list-members", "--project-id", f.project}, []any{member}},
	} {
		if diff := cmp.Diff(c.want, normalize(h.read(c.args...), names)); diff != "" {
			t.Errorf("%v --json (-want +got):\n%s", c.args, diff)
		}
	}
	for cmd, header := range map[string]string{"list-accounts": "ACCOUNT ID", "list-projects": "PROJECT ID"} {
		if out := h.must(cmd); !strings.HasPrefix(out, header) || !strings.Contains(out, f.account) {
			t.Errorf("%s text = %q", cmd, out)
		}
	}
	if out := h.must("list-members", "--project-id", f.project); !strings.Contains(out, f.principal+"  Ada") {
		t.Errorf("list-members text = %q", out)
	}
}

// TestLC05LifecycleRefusals: unknown ids, a principal of another account,
// a non-member, a repeated state change and bad flags exit 1 or 2 with one
// line and write no row.
func TestLC05LifecycleRefusals(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	f := h.fixture()
	const usage, failure = true, false
	tests := []struct {
		args  []string
		usage bool
		want  string
	}{
		{[]string{"remove-member", "--project-id", f.project, "--principal-id", f.principal}, failure, "is not a member of project"},
		{[]string{"remove-member", "--project-id", f.project, "--principal-id", f.stranger}, failure, "belongs to account"},
		{[]string{"remove-member", "--project-id", unknownID, "--principal-id", f.principal}, failure, "project " + unknownID + " not found"},
		{[]string{"remove-member", "--project-id", f.project, "--principal-id", unknownID}, failure, "principal " + unknownID + " not found"},
		{[]string{"remove-member", "--project-id", f.project}, usage, "--principal-id is required"},
		{[]string{"remove-member", "--project-id", "nope", "--principal-id", f.principal}, usage, "--project-id must be a UUID"},
		{[]string{"disable-principal", "--principal-id", unknownID}, failure, "principal " + unknownID + " not found"},
		{[]string{"disable-principal"}, usage, "--principal-id is required"},
		{[]string{"enable-principal", "--principal-id", f.principal}, failure, "is not disabled"},
		{[]string{"enable-principal", "--principal-id", unknownID}, failure, "not found"},
		{[]string{"revoke-sessions", "--principal-id", unknownID}, failure, "not found"},
		{[]string{"revoke-sessions", "--principal-id", "x"}, usage, "must be a UUID"},
		{[]string{"list-accounts", "extra"}, usage, "unexpected argument"},
		{[]string{"list-projects", "--account-id", unknownID}, failure, "account " + unknownID + " not found"},
		{[]string{"list-projects", "--account-id", ""}, usage, "--account-id is required"},
		{[]string{"list-principals", "--account-id", unknownID}, failure, "not found"},
		{[]string{"list-principals"}, usage, "--account-id is required"},
		{[]string{"list-members", "--project-id", unknownID}, failure, "not found"},
		{[]string{"list-members", "--project-id", f.project, "--principal-id", f.principal}, usage, "flag provided but not defined"},
	}
	h.change("disable-principal", "--principal-id", f.stranger)
	tests = append(tests, struct {
		args  []string
		usage bool
		want  string
	}{[]string{"disable-principal", "--principal-id", f.stranger}, failure, "is already disabled"})
	for _, tc := range tests {
		before := h.counts()
		stdout, stderr, err := h.run(tc.args...)
		switch {
		case err == nil:
			t.Errorf("%v: accepted", tc.args)
			continue
		case errors.Is(err, admin.ErrUsage) != tc.usage:
			t.Errorf("%v: usage = %v, want %v (%v)", tc.args, errors.Is(err, admin.ErrUsage), tc.usage, err)
		case !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n"):
			t.Errorf("%v: err = %q, want one line with %q", tc.args, err, tc.want)
		case stdout != "":
			t.Errorf("%v: printed %q on stdout", tc.args, stdout)
		}
		if tc.usage && strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: stderr %q, want one line", tc.args, stderr)
		}
		if diff := cmp.Diff(before, h.counts()); diff != "" {
			t.Errorf("%v changed rows:\n%s", tc.args, diff)
		}
	}
}
