package storetest

import (
	"database/sql"
	"testing"
)

func open(t *testing.T, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("postgres", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(1)
	return db
}

// TestWireCounterCountsTheProtocol checks the counts the benchmark reports:
// a statement without arguments is one simple Query (one round trip), one
// with arguments, unprepared, is Parse/Describe/Sync then Bind/Execute/Sync
// (one statement, one preparation, two round trips).
func TestWireCounterCountsTheProtocol(t *testing.T) {
	dbURL := NewURL(t)
	wc := NewWireCounter(t, dbURL)
	db := open(t, wc.DSN(dbURL))
	if err := db.Ping(); err != nil {
		t.Fatal(err)
	}
	base := wc.Counts()
	if _, err := db.Exec(`SELECT 1`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`SELECT $1::int`, 1); err != nil {
		t.Fatal(err)
	}
	got := wc.Counts().Sub(base)
	want := WireCounts{Statements: 2, Parses: 1, RoundTrips: 3, Open: 1, MaxOpen: 1, Accepted: 0}
	if got != want {
		t.Errorf("counts %+v, want %+v", got, want)
	}
}

// TestFaultProxyPassResetPass checks that the proxy forwards, refuses every
// connection while reset, and forwards again after Pass.
func TestFaultProxyPassResetPass(t *testing.T) {
	dbURL := NewURL(t)
	p := ProxyTo(t, "unix", UnixSocket(t, dbURL))
	if err := open(t, p.DBURL(dbURL)).Ping(); err != nil {
		t.Fatalf("through the proxy: %v", err)
	}
	p.Reset()
	if err := open(t, p.DBURL(dbURL)).Ping(); err == nil {
		t.Fatal("a connection through a reset proxy worked")
	}
	p.Pass()
	if err := open(t, p.DBURL(dbURL)).Ping(); err != nil {
		t.Fatalf("after Pass: %v", err)
	}
	if n := p.Accepted(); n < 3 {
		t.Errorf("the proxy accepted %d connections, want at least 3 (one per open)", n)
	}
}
