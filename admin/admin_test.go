package admin_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"heyaira/admin"
	"heyaira/oauth"
	"heyaira/store"
	"heyaira/store/storetest"
)

// The sample commit of the tests: 40 lowercase hex characters.
const sha = "0123456789abcdef0123456789abcdef01234567"

// harness runs admin commands against one fresh, migrated PostgreSQL database.
type harness struct {
	t   testing.TB
	env map[string]string
	db  *store.DB // the same database, for checks the CLI cannot make
}

func newHarness(t testing.TB) *harness {
	t.Helper()
	url := storetest.NewMigratedURL(t)
	db, err := store.Open(t.Context(), url)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return &harness{t: t, db: db, env: map[string]string{
		"HEYAIRA_DATABASE_URL":    url,
		"HEYAIRA_PUBLIC_URL":      "https://heyaira.example/",
		"HEYAIRA_CURSOR_KEY_FILE": writeKeyFile(t),
	}}
}

// testKey is the harness's cursor key, as serve would read it.
const testKey = "0707070707070707070707070707070707070707070707070707070707070707"

// writeKeyFile writes testKey to a protected file and returns its path.
func writeKeyFile(t testing.TB) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "cursor.key")
	if err := os.WriteFile(path, []byte(testKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// serverSecrets are the secrets a server with the harness's key file
// recognises.
func serverSecrets(t testing.TB) *oauth.Secrets { return storetest.Secrets(t, testKey) }

// sub returns the harness bound to a subtest (same database).
func (h *harness) sub(t testing.TB) *harness {
	return &harness{t: t, env: h.env, db: h.db}
}

// run runs one admin command and returns what it printed.
func (h *harness) run(args ...string) (stdout, stderr string, err error) {
	h.t.Helper()
	return runWith(h.t, h.env, args...)
}

func runWith(t testing.TB, env map[string]string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	getenv := func(k string) string { return env[k] }
	err = admin.Run(t.Context(), args, getenv, &out, &errOut, storetest.Schema(t))
	return out.String(), errOut.String(), err
}

// must runs a command that must succeed and returns its stdout.
func (h *harness) must(args ...string) string {
	h.t.Helper()
	out, errOut, err := h.run(args...)
	if err != nil {
		h.t.Fatalf("%s: %v\nstderr: %s", strings.Join(args, " "), err, errOut)
	}
	return out
}

// mustJSON runs a command with --json and decodes its output into v.
func (h *harness) mustJSON(v any, args ...string) {
	h.t.Helper()
	out := h.must(append(args, "--json")...)
	dec := json.NewDecoder(strings.NewReader(out))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		h.t.Fatalf("%s: decode %q: %v", args[0], out, err)
	}
}

// id runs a command whose text output is the new row's ID.
func (h *harness) id(args ...string) string {
	h.t.Helper()
	out := strings.TrimSpace(h.must(args...))
	if !uuidRE.MatchString(out) {
		h.t.Fatalf("%s printed %q, want an ID", args[0], out)
	}
	return out
}

// counts returns the number of rows of every table of the schema, so a test
// can show that a refused command wrote nothing anywhere.
func (h *harness) counts() map[string]int64 {
	h.t.Helper()
	rows, err := h.db.SQL().QueryContext(h.t.Context(), `
		SELECT table_name::text,
		       (xpath('/row/n/text()', query_to_xml(format('SELECT count(*) AS n FROM %I.%I',
		            table_schema, table_name), false, true, '')))[1]::text::bigint
		FROM information_schema.tables
		WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`)
	if err != nil {
		h.t.Fatalf("count rows: %v", err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var name string
		var n int64
		if err := rows.Scan(&name, &n); err != nil {
			h.t.Fatalf("count rows: %v", err)
		}
		out[name] = n
	}
	if err := rows.Err(); err != nil {
		h.t.Fatalf("count rows: %v", err)
	}
	if len(out) < 10 {
		h.t.Fatalf("counted only %d tables", len(out))
	}
	return out
}

// dump returns the whole content of every table as text, to search for secrets.
func (h *harness) dump() string {
	h.t.Helper()
	var s string
	err := h.db.SQL().QueryRowContext(h.t.Context(), `
		SELECT string_agg(query_to_xml(format('SELECT * FROM %I.%I', table_schema, table_name),
		                               true, false, '')::text, E'\n')
		FROM information_schema.tables
		WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`).Scan(&s)
	if err != nil {
		h.t.Fatalf("dump: %v", err)
	}
	return s
}

func (h *harness) auditCount() int64 {
	h.t.Helper()
	return h.counts()["audit_events"]
}

// fixture is a small tenant tree built through the CLI.
type fixture struct {
	account, project, principal string
	repository                  string // h8v6/heyaira, linked to project
	otherAccount, stranger      string // a second account and its principal
	revokedSource               string // set by refusalFixture
}

func (h *harness) fixture() fixture {
	h.t.Helper()
	var f fixture
	f.account = h.id("create-account", "--name", "Acme")
	f.project = h.id("create-project", "--account-id", f.account, "--name", "Continuity")
	f.principal = h.id("create-principal", "--account-id", f.account, "--name", "Ada")
	f.repository = h.id("link-repository", "--project-id", f.project, "--github-owner", "h8v6",
		"--github-repository", "heyaira", "--github-installation-id", "42")
	f.otherAccount = h.id("create-account", "--name", "Other")
	f.stranger = h.id("create-principal", "--account-id", f.otherAccount, "--name", "Eve")
	return f
}

var (
	uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	timeRE = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d`)
)

// normalize replaces the IDs of names with their names, other UUIDs with
// "<uuid>" and timestamps with "<time>", so JSON output can be compared whole.
func normalize(v any, names map[string]string) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, x := range v {
			out[k] = normalize(x, names)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = normalize(x, names)
		}
		return out
	case string:
		if n, ok := names[v]; ok {
			return n
		}
		if uuidRE.MatchString(v) {
			return "<uuid>"
		}
		if timeRE.MatchString(v) {
			if _, err := time.Parse(time.RFC3339Nano, v); err == nil {
				return "<time>"
			}
		}
		return v
	default:
		return v
	}
}
