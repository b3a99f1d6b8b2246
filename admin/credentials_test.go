package admin_test

import (
	"crypto/sha256"
	"encoding/base64"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"heyaira/oauth"
	"heyaira/store"

	"github.com/google/go-cmp/cmp"
)

// oauthRows inserts, as the OAuth server would, a client, a grant of the
// principal in the project, and three tokens: an access and a refresh token
// of one family and an access token of another. It returns their IDs.
func (h *harness) oauthRows(f fixture) (client, grant, access, refresh, other string) {
	h.t.Helper()
	q := func(dst *string, query string, args ...any) {
		h.t.Helper()
		if err := h.db.SQL().QueryRowContext(h.t.Context(), query, args...).Scan(dst); err != nil {
			h.t.Fatalf("%s: %v", query, err)
		}
	}
	q(&client, `INSERT INTO oauth_clients (client_name, redirect_uris) VALUES ('Claude', ARRAY['https://claude.ai/cb']) RETURNING id`)
	q(&grant, `INSERT INTO oauth_grants (client_id, principal_id, project_id, scopes)
		VALUES ($1, $2, $3, ARRAY['memory:read','documents:read']) RETURNING id`, client, f.principal, f.project)
	token := `INSERT INTO oauth_tokens (token_hash, kind, grant_id, scopes, resource, family_id, expires_at)
		VALUES (sha256($1::bytea), $2, $3, ARRAY['memory:read'], 'https://heyaira.example/mcp', $4, now() + interval '1 hour')
		RETURNING id`
	// Secrets and families are per grant, so a test may make several grants.
	var fam1, fam2 string
	q(&fam1, `SELECT gen_random_uuid()::text`)
	q(&fam2, `SELECT gen_random_uuid()::text`)
	q(&access, token, "a1"+grant, "access", grant, fam1)
	q(&refresh, token, "r1"+grant, "refresh", grant, fam1)
	q(&other, token, "a2"+grant, "access", grant, fam2)
	return
}

// Row LC-07 (docs/security-tests.md).
func TestCredentialCommands(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	f := h.fixture()
	h.change("add-member", "--project-id", f.project, "--principal-id", f.principal)
	client, grant, access, refresh, other := h.oauthRows(f)
	names := map[string]string{f.project: "<project>", f.principal: "<principal>", client: "<client>",
		grant: "<grant>", access: "<access>", refresh: "<refresh>", other: "<other>"}

	got := h.changeJSON("issue-legacy-token", "--project-id", f.project, "--name", "ci runner")
	m := got.(map[string]any)
	legacy := m["id"].(string)
	names[legacy] = "<legacy>"
	if tok, _ := m["token"].(string); !legacyTokenRE.MatchString(tok) {
		t.Errorf("token = %q, want hyl_ and 75 base64url characters", tok)
	}
	m["token"] = "<token>"
	wantLegacy := map[string]any{"id": "<legacy>", "project_id": "<project>", "name": "ci runner",
		"scopes":     []any{"memory:read", "memory:write", "tasks:read", "tasks:write"},
		"created_at": "<time>", "expires_at": nil, "revoked_at": nil, "reissue": false}
	want := map[string]any{"token": "<token>"}
	for k, v := range wantLegacy {
		want[k] = v
	}
	if diff := cmp.Diff(want, normalize(m, names)); diff != "" {
		t.Errorf("issue-legacy-token --json (-want +got):\n%s", diff)
	}

	tokens := func(ids ...string) []any {
		out := []any{}
		for _, id := range ids {
			kind := "access"
			if id == refresh {
				kind = "refresh"
			}
			out = append(out, map[string]any{"token_id": names[id], "kind": kind, "family_id": "<uuid>", "expires_at": "<time>"})
		}
		return out
	}
	wantGrant := map[string]any{"grant_id": "<grant>", "client_id": "<client>", "client_name": "Claude",
		"principal_id": "<principal>", "principal_name": "Ada", "project_id": "<project>",
		"scopes": []any{"memory:read", "documents:read"}, "created_at": "<time>", "revoked_at": nil,
		"active_tokens": tokens(access, refresh, other)}
	// Live families, most recently used first: a2's, then a1 and r1's.
	family := func(live string, refresh bool) map[string]any {
		f := map[string]any{"family_id": "<uuid>", "started_at": "<time>", "last_used_at": "<time>",
			"refresh_expires_at": nil, "live_tokens": num(live)}
		if refresh {
			f["refresh_expires_at"] = "<time>"
		}
		return f
	}
	wantGrant["families"] = []any{family("1", false), family("2", true)}
	wantList := map[string]any{"project_id": "<project>", "grants": []any{wantGrant}, "legacy_tokens": []any{wantLegacy}}
	if diff := cmp.Diff(wantList, normalize(h.read("list-grants", "--project-id", f.project), names)); diff != "" {
		t.Errorf("list-grants --json (-want +got):\n%s", diff)
	}

	// A refresh token takes its family with it: r1 and a1, not a2.
	got = h.changeJSON("revoke-token", "--token-id", refresh)
	wantRev := map[string]any{"id": "<refresh>", "kind": "refresh", "project_id": "<project>",
		"revoked_at": "<time>", "tokens_revoked": num("2")}
	if diff := cmp.Diff(wantRev, normalize(got, names)); diff != "" {
		t.Errorf("revoke-token refresh (-want +got):\n%s", diff)
	}
	wantGrant["active_tokens"] = tokens(other)
	wantGrant["families"] = []any{family("1", false)}
	if diff := cmp.Diff(wantList, normalize(h.read("list-grants", "--project-id", f.project), names)); diff != "" {
		t.Errorf("list-grants after revoke-token (-want +got):\n%s", diff)
	}

	// Revoking the grant revokes what is left of its tokens.
	got = h.changeJSON("revoke-grant", "--grant-id", grant)
	wantRev = map[string]any{"id": "<grant>", "kind": "grant", "project_id": "<project>",
		"revoked_at": "<time>", "tokens_revoked": num("1")}
	if diff := cmp.Diff(wantRev, normalize(got, names)); diff != "" {
		t.Errorf("revoke-grant (-want +got):\n%s", diff)
	}
	var live int
	if err := h.db.SQL().QueryRowContext(t.Context(),
		`SELECT count(*) FROM oauth_tokens WHERE grant_id = $1 AND revoked_at IS NULL`, grant).Scan(&live); err != nil {
		t.Fatal(err)
	}
	if live != 0 {
		t.Errorf("%d tokens of the revoked grant are still live", live)
	}

	// The other kind's flag is refused, naming the flag that revokes it
	// (list-grants lists both kinds together).
	for _, tc := range []struct{ flag, id, want string }{
		{"--token-id", legacy, "token " + legacy + " not found: it is a legacy token; revoke it with heyaira-admin revoke-token --legacy-token-id " + legacy},
		{"--legacy-token-id", access, "legacy token " + access + " not found: it is an OAuth token; revoke it with heyaira-admin revoke-token --token-id " + access},
		{"--token-id", unknownID, "token " + unknownID + " not found"},
	} {
		before := h.counts()
		if _, _, err := h.run("revoke-token", tc.flag, tc.id); err == nil || !strings.HasSuffix(err.Error(), tc.want) {
			t.Errorf("revoke-token %s: err = %v, want %q", tc.flag, err, tc.want)
		}
		if diff := cmp.Diff(before, h.counts()); diff != "" {
			t.Errorf("revoke-token %s changed row counts:\n%s", tc.flag, diff)
		}
	}

	got = h.changeJSON("revoke-token", "--legacy-token-id", legacy)
	wantRev = map[string]any{"id": "<legacy>", "kind": "legacy", "project_id": "<project>",
		"revoked_at": "<time>", "tokens_revoked": num("1")}
	if diff := cmp.Diff(wantRev, normalize(got, names)); diff != "" {
		t.Errorf("revoke-token --legacy-token-id (-want +got):\n%s", diff)
	}
	wantGrant["revoked_at"] = "<time>"
	wantGrant["active_tokens"] = []any{}
	wantGrant["families"] = []any{}
	wantLegacy["revoked_at"] = "<time>"
	if diff := cmp.Diff(wantList, normalize(h.read("list-grants", "--project-id", f.project), names)); diff != "" {
		t.Errorf("list-grants after revocations (-want +got):\n%s", diff)
	}

	// Revoking twice is refused and writes nothing.
	for _, args := range [][]string{
		{"revoke-grant", "--grant-id", grant},
		{"revoke-token", "--token-id", access},
		{"revoke-token", "--legacy-token-id", legacy},
	} {
		before := h.counts()
		if _, _, err := h.run(args...); err == nil || !strings.Contains(err.Error(), "already revoked") {
			t.Errorf("%v: err = %v, want already revoked", args, err)
		}
		if diff := cmp.Diff(before, h.counts()); diff != "" {
			t.Errorf("%v changed row counts:\n%s", args, diff)
		}
	}
}

var legacyTokenRE = regexp.MustCompile(`^hyl_[A-Za-z0-9_-]{75}$`)

// TestSecretsArePrintedOnceAndStoredHashed shows that the legacy token and
// the sign-in link secret appear once, on stdout only, and that the database
// holds their SHA-256 and nothing from which they could be read back.
// Rows CR-02, JK-09 (docs/security-tests.md).
func TestSecretsArePrintedOnceAndStoredHashed(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	f := h.fixture()

	stdout, stderr, err := h.run("issue-legacy-token", "--project-id", f.project, "--name", "ci")
	if err != nil {
		t.Fatalf("issue-legacy-token: %v", err)
	}
	token := strings.TrimSpace(stdout)
	if !legacyTokenRE.MatchString(token) || strings.Count(stdout, "\n") != 1 {
		t.Fatalf("stdout = %q, want the token alone", stdout)
	}
	if strings.Contains(stderr, token) || strings.Contains(stderr, token[4:]) {
		t.Errorf("stderr repeats the token: %q", stderr)
	}
	h.checkHashed(token, "legacy_tokens", "token_hash")
	if !serverSecrets(t).Valid(token, oauth.PrefixLegacy, time.Now()) {
		t.Error("the server would not recognise the legacy token: its MAC is not under the key file's key")
	}

	stdout, stderr, err = h.run("signin-link", "--principal-id", f.principal)
	if err != nil {
		t.Fatalf("signin-link: %v", err)
	}
	link, err := url.Parse(strings.TrimSpace(stdout))
	if err != nil || strings.Count(stdout, "\n") != 1 {
		t.Fatalf("stdout = %q, want the URL alone", stdout)
	}
	if got, want := link.Scheme+"://"+link.Host+link.Path, "https://heyaira.example/signin"; got != want {
		t.Errorf("link = %s, want it on %s", link, want)
	}
	secret := link.Query().Get("token")
	if !serverSecrets(t).Valid(secret, oauth.PrefixSignin, time.Now()) ||
		serverSecrets(t).Valid(secret, oauth.PrefixSignin, time.Now().Add(store.SigninLinkTTL+2*time.Minute)) {
		t.Fatalf("link secret %q is not one the server recognises until its expiry and refuses after", secret)
	}
	if strings.Contains(stderr, secret) {
		t.Errorf("stderr repeats the secret: %q", stderr)
	}
	h.checkHashed(secret, "signin_links", "token_hash")

	var ttl float64
	if err := h.db.SQL().QueryRowContext(t.Context(),
		`SELECT extract(epoch FROM expires_at - created_at) FROM signin_links`).Scan(&ttl); err != nil {
		t.Fatal(err)
	}
	if ttl != (15 * time.Minute).Seconds() {
		t.Errorf("link lifetime = %vs, want 900s", ttl)
	}

	// Two links for the same principal have different secrets.
	stdout2, _, err := h.run("signin-link", "--principal-id", f.principal)
	if err != nil || stdout2 == stdout {
		t.Errorf("second link: %q, %v; want a new secret", stdout2, err)
	}
}

// checkHashed asserts that no table holds secret (or its random part) in any
// form that query_to_xml prints, and that table.column holds its SHA-256.
func (h *harness) checkHashed(secret, table, column string) {
	h.t.Helper()
	dump := h.dump()
	_, random, _ := strings.Cut(secret, "_")
	raw, _ := base64.RawURLEncoding.DecodeString(random)
	for _, s := range []string{secret, random, base64.StdEncoding.EncodeToString(raw)} {
		if strings.Contains(dump, s) {
			h.t.Errorf("the database holds the secret %q", s)
		}
	}
	sum := sha256.Sum256([]byte(secret))
	var n int
	// table and column are constants of this test, never input.
	if err := h.db.SQL().QueryRowContext(h.t.Context(),
		`SELECT count(*) FROM `+table+` WHERE `+column+` = $1`, sum[:]).Scan(&n); err != nil {
		h.t.Fatal(err)
	}
	if n != 1 {
		h.t.Errorf("%s.%s holds SHA-256(secret) %d times, want 1", table, column, n)
	}
}

// signin-link keeps the server's rule for HEYAIRA_PUBLIC_URL: a link, whose
// query carries a one-time secret, is never printed on plain http to a host
// that is not loopback, on a path or after a '#', nor on a URL the server
// would refuse to start with. Before, it accepted each of these and printed
// the secret on it.
func TestSigninLinkRefusesAPublicURLTheServerRefuses(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	f := h.fixture()
	for _, v := range []string{"http://heyaira.example.com", "https://h.example/base", "https://h.example/#",
		"https://H.example", "https://h.example:443"} {
		env := maps.Clone(h.env)
		env["HEYAIRA_PUBLIC_URL"] = v
		stdout, _, err := runWith(t, env, "signin-link", "--principal-id", f.principal)
		if err == nil || !strings.Contains(err.Error(), "HEYAIRA_PUBLIC_URL") || stdout != "" {
			t.Errorf("%s: %v, stdout %q; want a refusal naming HEYAIRA_PUBLIC_URL and nothing printed", v, err, stdout)
		}
	}
	var n int
	if err := h.db.SQL().QueryRowContext(t.Context(), `SELECT count(*) FROM signin_links`).Scan(&n); err != nil || n != 0 {
		t.Errorf("%d sign-in links made (%v), want 0", n, err)
	}
}

// TestMintingCommandsNeedTheKeyFile: issue-legacy-token and signin-link sign
// what they issue with the server's key, so they refuse, naming
// HEYAIRA_CURSOR_KEY_FILE, when it is unset, missing or not protected, and
// write nothing; other commands do not read it.
// Row JK-09 (docs/security-tests.md).
func TestMintingCommandsNeedTheKeyFile(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	f := h.fixture()
	open := filepath.Join(t.TempDir(), "open.key")
	if err := os.WriteFile(open, []byte(testKey), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, path := range map[string]string{"unset": "", "missing": filepath.Join(t.TempDir(), "none"), "group-readable": open} {
		env := maps.Clone(h.env)
		env["HEYAIRA_CURSOR_KEY_FILE"] = path
		for _, args := range [][]string{{"issue-legacy-token", "--project-id", f.project, "--name", "ci"},
			{"signin-link", "--principal-id", f.principal}} {
			if _, _, err := runWith(t, env, args...); err == nil || !strings.Contains(err.Error(), "HEYAIRA_CURSOR_KEY_FILE") {
				t.Errorf("%s key file, %s: %v; want a refusal naming HEYAIRA_CURSOR_KEY_FILE", name, args[0], err)
			}
		}
		if _, _, err := runWith(t, env, "list-accounts"); err != nil {
			t.Errorf("%s key file, list-accounts: %v", name, err)
		}
	}
	var n int
	if err := h.db.SQL().QueryRowContext(t.Context(),
		`SELECT (SELECT count(*) FROM legacy_tokens) + (SELECT count(*) FROM signin_links)`).Scan(&n); err != nil || n != 0 {
		t.Errorf("%d rows written by refused commands (%v)", n, err)
	}
}

// TestListLegacyReissue: after the upgrade to signed tokens, the legacy
// tokens issued before it (signed = false, which the migration gives every
// row that existed) are listed with the commands that replace them; a token
// issued since, a revoked one and an expired one are not.
// Row JK-10 (docs/security-tests.md).
func TestListLegacyReissue(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	f := h.fixture()
	h.change("issue-legacy-token", "--project-id", f.project, "--name", "new")
	var old string
	for _, name := range []string{"it's old", "revoked", "expired"} {
		if err := h.db.SQL().QueryRowContext(t.Context(), `INSERT INTO legacy_tokens (project_id, name, token_hash, scopes, signed)
			VALUES ($1, $2, sha256(convert_to($2, 'UTF8')), ARRAY['memory:read'], false) RETURNING id`, f.project, name).Scan(&old); err != nil {
			t.Fatal(err)
		}
		switch name {
		case "revoked":
			h.sql(`UPDATE legacy_tokens SET revoked_at = now() WHERE id = $1`, old)
		case "expired":
			h.sql(`UPDATE legacy_tokens SET created_at = now() - interval '2 days', expires_at = now() - interval '1 day' WHERE id = $1`, old)
		}
	}
	list := h.read("list-legacy-reissue").([]any)
	if len(list) != 1 || list[0].(map[string]any)["name"] != "it's old" || list[0].(map[string]any)["reissue"] != true {
		t.Fatalf("list-legacy-reissue --json = %v, want the one live unsigned token", list)
	}
	id := list[0].(map[string]any)["id"].(string)
	out, _, err := h.run("list-legacy-reissue")
	if err != nil || !strings.Contains(out, "heyaira-admin issue-legacy-token --project-id "+f.project+` --name 'it'\''s old'`) ||
		!strings.Contains(out, "heyaira-admin revoke-token --legacy-token-id "+id) {
		t.Errorf("list-legacy-reissue: %v\n%s", err, out)
	}
}

// sql runs a statement on the harness's database.
func (h *harness) sql(q string, args ...any) {
	h.t.Helper()
	if _, err := h.db.SQL().ExecContext(h.t.Context(), q, args...); err != nil {
		h.t.Fatalf("%s: %v", q, err)
	}
}
