// Package storetest holds the PostgreSQL test helpers: a fresh, migrated
// database per test, the goroutine-leak check for packages whose tests use
// one (MainWithLeakCheck), and, for the fault tests and the benchmark, a
// cluster a test owns (OwnCluster), a fault proxy (FaultProxy) and a counter
// of the wire protocol (WireCounter). Packages whose tests need no database
// use internal/leaktest instead and do not link the store.
//
// The cluster is the one HEYAIRA_F1_E2E_DATABASE_URL names (scripts/test
// sets it to a database in a throwaway cluster). When it is unset, a plain
// `go test` gets a private cluster per test binary (cluster.go), or, without
// PostgreSQL binaries on the machine, a one-line skip (a failure under
// scripts/test, which sets HEYAIRA_TEST_NO_SKIP). Each call creates a new database (from a
// migrated template, so it is fast) and drops it when the test ends, so tests
// can run in parallel and count rows without seeing each other.
package storetest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"heyaira/store"

	"github.com/lib/pq"
)

// EnvURL names the variable that points at the test cluster.
const EnvURL = "HEYAIRA_F1_E2E_DATABASE_URL"

var (
	templateOnce sync.Once
	templateName string
	templateErr  error
)

// Schema returns the text of the repository's schema.sql.
func Schema(t testing.TB) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	b, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "..", "schema.sql"))
	if err != nil {
		t.Fatalf("read schema.sql: %v", err)
	}
	return string(b)
}

// BaseURL returns the cluster URL: EnvURL when set, else this test
// binary's private cluster, started on first use. Without PostgreSQL
// binaries the test is skipped (see Missing).
func BaseURL(t testing.TB) string {
	t.Helper()
	if u := os.Getenv(EnvURL); u != "" {
		return u
	}
	return privateClusterURL(t)
}

// NewURL creates an empty database (no schema) and returns its URL.
func NewURL(t testing.TB) string {
	t.Helper()
	return createDB(t, "")
}

// NewMigratedURL creates a database with schema.sql applied and returns its URL.
func NewMigratedURL(t testing.TB) string {
	t.Helper()
	templateOnce.Do(func() {
		templateName = "tmpl_" + randomName()
		templateErr = func() error {
			admin, err := sql.Open("postgres", BaseURL(t))
			if err != nil {
				return err
			}
			defer admin.Close()
			if _, err := admin.Exec(`CREATE DATABASE ` + pq.QuoteIdentifier(templateName)); err != nil {
				return err
			}
			db, err := store.Open(context.Background(), withDB(BaseURL(t), templateName))
			if err != nil {
				return err
			}
			defer db.Close()
			return db.Migrate(context.Background(), Schema(t))
		}()
	})
	if templateErr != nil {
		t.Fatalf("storetest: template database: %v", templateErr)
	}
	return createDB(t, templateName)
}

// New returns a store on a fresh migrated database, closed when the test ends.
//
// The store's first ping must answer within its I/O deadline (3.25 s). A
// plain `go test ./...` runs every package's tests at once, each package on
// its own cluster, and a first connection to a fresh database has missed
// that deadline there under load; such an open is retried twice (and
// logged). The deadline itself is the store's own and is tested there.
func New(t testing.TB) *store.DB {
	t.Helper()
	url := NewMigratedURL(t)
	db, err := store.Open(t.Context(), url)
	for try := 1; err != nil && errors.Is(err, store.ErrUnavailable) && try <= 2; try++ {
		t.Logf("storetest: open (try %d): %v", try, err)
		db, err = store.Open(t.Context(), url)
	}
	if err != nil {
		t.Fatalf("storetest: open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func createDB(t testing.TB, template string) string {
	t.Helper()
	base := BaseURL(t)
	admin, err := sql.Open("postgres", base)
	if err != nil {
		t.Fatalf("storetest: %v", err)
	}
	t.Cleanup(func() { admin.Close() })
	name := "t_" + randomName()
	q := `CREATE DATABASE ` + pq.QuoteIdentifier(name)
	if template != "" {
		q += ` TEMPLATE ` + pq.QuoteIdentifier(template)
	}
	// Identifiers cannot be placeholders; name and template are generated here, never input.
	if _, err := admin.Exec(q); err != nil {
		t.Fatalf("storetest: create database: %v", err)
	}
	t.Cleanup(func() {
		admin.Exec(`DROP DATABASE IF EXISTS ` + pq.QuoteIdentifier(name) + ` WITH (FORCE)`)
	})
	return withDB(base, name)
}

func withDB(base, name string) string {
	u, err := url.Parse(base)
	if err != nil {
		return base
	}
	u.Path = "/" + name
	return u.String()
}

func randomName() string {
	b := make([]byte, 8)
	rand.Read(b)
	return hex.EncodeToString(b)
}
