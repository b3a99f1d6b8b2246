package server_test

// Database-fault rows of the attack matrix (docs/security-tests.md §2.6) at
// the server: backends killed mid-request, a store fault injected at each
// step of a refresh rotation (with PostgreSQL triggers: the injector is the
// database itself, so the real store code runs), a forced serialization
// failure, revocation while the store is locked, a lock held on
// document_sources, and no connection held across a GitHub call. DB-01
// (restart) and DB-04(a) (a lost COMMIT reply) are process-level tests in the
// system tests (internal/systemtest/fault_pg_test.go).

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"heyaira/internal/soak"
	"heyaira/oauth"
	"heyaira/server"
	"heyaira/server/internal/servertest"
	"heyaira/store"
)

// Row DB-02: while another session keeps terminating the server's
// backends, every document and memory read either succeeds with exactly
// its own bytes or fails closed with store_unavailable (a tool error, or
// 503 from the authorization check): never content without a completed
// authorization check, never 401, never internal.
func TestDB02BackendsKilledMidRequest(t *testing.T) {
	t.Parallel()
	e := servertest.New(t, func(c *server.Config) { c.ToolRate, c.ToolBurst = 1e6, 1e6 })
	tn := e.NewTenant("o", "r")
	doc := servertest.MixedText(3000)
	e.GH.AddFile("o", "r", servertest.CommitA, "a.md", doc)
	src := e.AddSource(tn, "runtime", "a.md", servertest.CommitA, "", 65536)
	tok := e.Token(tn, "documents:read", "memory:read", "memory:write")
	e.Call(tok, "memory_put", map[string]any{"key": "k", "content": "v"})
	killer, err := e.DB.SQL().Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer killer.Close()
	ctx, cancel := context.WithTimeout(t.Context(), soak.Scaled(2*time.Second, 20*time.Second))
	defer cancel()
	var kills int
	killed := make(chan struct{})
	go func() {
		defer close(killed)
		for ctx.Err() == nil {
			var n int
			killer.QueryRowContext(context.Background(), `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
				WHERE datname = current_database() AND pid <> pg_backend_pid()`).Scan(&n)
			kills += n
			time.Sleep(15 * time.Millisecond)
		}
	}()
	var mu sync.Mutex
	counts := map[string]int{}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				var r servertest.Reply
				if w%2 == 0 {
					r = e.RPC(tok, "tools/call", map[string]any{"name": "git_document_get", "arguments": map[string]any{"source_id": src}})
				} else {
					r = e.RPC(tok, "tools/call", map[string]any{"name": "memory_get", "arguments": map[string]any{"key": "k"}})
				}
				code := servertest.RPCOutcome(r)
				if code == "ok" && w%2 == 0 && !strings.Contains(string(r.Raw), servertest.HexSHA(doc)) {
					code = "wrong_content"
				}
				mu.Lock()
				counts[code]++
				mu.Unlock()
				if code != "ok" && code != "store_unavailable" {
					t.Errorf("with backends being killed: %s %.300s", code, r.Raw)
				}
			}
		}()
	}
	wg.Wait()
	<-killed
	t.Logf("DB-02: %d backends terminated; outcomes %v", kills, counts)
	if counts["ok"] == 0 || counts["store_unavailable"] == 0 {
		t.Logf("DB-02: the interleaving did not produce both outcomes this run: %v", counts)
	}
}

// faultTrigger installs a trigger on oauth_tokens that raises errcode
// when the rotation reaches step; the returned func removes it.
func faultTrigger(e *servertest.Env, step, errcode string) func() {
	e.Exec(`CREATE OR REPLACE FUNCTION fault_fail() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN RAISE EXCEPTION 'injected fault' USING ERRCODE = TG_ARGV[0]; END $$`)
	q := map[string]string{
		"mark the old token used": `CREATE TRIGGER fault BEFORE UPDATE ON oauth_tokens FOR EACH ROW
			WHEN (OLD.used_at IS NULL AND NEW.used_at IS NOT NULL) EXECUTE FUNCTION fault_fail('%s')`,
		"insert the access token": `CREATE TRIGGER fault BEFORE INSERT ON oauth_tokens FOR EACH ROW
			WHEN (NEW.kind = 'access') EXECUTE FUNCTION fault_fail('%s')`,
		"insert the refresh token": `CREATE TRIGGER fault BEFORE INSERT ON oauth_tokens FOR EACH ROW
			WHEN (NEW.kind = 'refresh') EXECUTE FUNCTION fault_fail('%s')`,
		"commit": `CREATE CONSTRAINT TRIGGER fault AFTER INSERT ON oauth_tokens DEFERRABLE INITIALLY DEFERRED
			FOR EACH ROW WHEN (NEW.kind = 'refresh') EXECUTE FUNCTION fault_fail('%s')`,
	}[step]
	// step and errcode are constants of the test, never input.
	e.Exec(fmt.Sprintf(q, errcode))
	return func() { e.Exec(`DROP TRIGGER fault ON oauth_tokens`) }
}

// Row DB-03: a store fault at each step of a refresh rotation (mark the
// old token used, insert the access token, insert the refresh token,
// commit) rolls the whole transaction back: the client gets 500
// server_error for an unclassified failure or 503 temporarily_unavailable
// for an unavailable store, no token row is added, and the old refresh
// token still works afterwards.
func TestDB03RotationFaultAtEachStep(t *testing.T) {
	t.Parallel()
	e, _ := servertest.NewOAuth(t)
	tn := e.NewTenant("o", "r")
	c := e.Register("http://127.0.0.1/cb")
	rt := servertest.Str(e.Tokens(t, tn, c, "memory:read").Body, "refresh_token")
	for _, step := range []string{"mark the old token used", "insert the access token", "insert the refresh token", "commit"} {
		for errcode, want := range map[string]struct {
			status int
			code   string
		}{"XX000": {500, "server_error"}, "57P01": {503, "temporarily_unavailable"}} {
			before := e.CountRows("oauth_tokens")
			drop := faultTrigger(e, step, errcode)
			r := e.Refresh(c, rt)
			drop()
			if r.Status != want.status || servertest.Str(r.Body, "error") != want.code {
				t.Errorf("%s (%s): %d %s, want %d %s", step, errcode, r.Status, r.Raw, want.status, want.code)
			}
			if strings.Contains(string(r.Raw), "injected") || strings.Contains(string(r.Raw), "oauth_tokens") {
				t.Errorf("%s: internal detail in the answer: %s", step, r.Raw)
			}
			if n := e.CountRows("oauth_tokens"); n != before {
				t.Errorf("%s (%s): %d token rows added by a failed rotation", step, errcode, n-before)
			}
			ok := e.Refresh(c, rt)
			if ok.Status != 200 {
				t.Fatalf("after a failed %s, the old refresh token: %d %s", step, ok.Status, ok.Raw)
			}
			rt = servertest.Str(ok.Body, "refresh_token")
		}
	}
}

// Row DB-04(b): a serialization failure (SQLSTATE 40001) on one of two
// concurrent rotations: that one gets a retryable 503
// temporarily_unavailable and changes nothing; the other succeeds; the
// retry of the first succeeds.
func TestDB04SerializationFailureIsRetryable(t *testing.T) {
	t.Parallel()
	e, _ := servertest.NewOAuth(t)
	tn := e.NewTenant("o", "r")
	c := e.Register("http://127.0.0.1/cb")
	rtX := servertest.Str(e.Tokens(t, tn, c, "memory:read").Body, "refresh_token")
	rtY := servertest.Str(e.Tokens(t, tn, c, "memory:read").Body, "refresh_token")
	family := e.QueryString(`SELECT family_id::text FROM oauth_tokens WHERE token_hash = $1`, oauth.Hash(rtX))
	e.Exec(`CREATE OR REPLACE FUNCTION fault_serialize() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN IF NEW.family_id = '` + family + `' THEN
			RAISE EXCEPTION 'could not serialize access' USING ERRCODE = '40001'; END IF; RETURN NEW; END $$`)
	e.Exec(`CREATE TRIGGER fault BEFORE INSERT ON oauth_tokens FOR EACH ROW EXECUTE FUNCTION fault_serialize()`)
	var rx, ry servertest.Reply
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); rx = e.Refresh(c, rtX) }()
	go func() { defer wg.Done(); ry = e.Refresh(c, rtY) }()
	wg.Wait()
	e.Exec(`DROP TRIGGER fault ON oauth_tokens`)
	if rx.Status != 503 || servertest.Str(rx.Body, "error") != "temporarily_unavailable" || rx.Header.Get("Retry-After") == "" {
		t.Errorf("serialization failure: %d %s %q, want 503 temporarily_unavailable with Retry-After", rx.Status, rx.Raw, rx.Header.Get("Retry-After"))
	}
	if ry.Status != 200 {
		t.Errorf("the other rotation: %d %s", ry.Status, ry.Raw)
	}
	if r := e.Refresh(c, rtX); r.Status != 200 {
		t.Errorf("retry after the serialization failure: %d %s", r.Status, r.Raw)
	}
}

// Row DB-05 (the HTTP part; the admin CLI part is TestDB05RevokeWhileLocked
// in internal/systemtest): POST /oauth/revoke while oauth_tokens is locked
// answers 503 at the database deadline, never a 200 that would claim a
// revocation; the token stays active and no revocation is audited.
func TestDB05RevokeEndpointWhileLocked(t *testing.T) {
	t.Parallel()
	e, _ := servertest.NewOAuth(t)
	tn := e.NewTenant("o", "r")
	c := e.Register("http://127.0.0.1/cb")
	at := servertest.Str(e.Tokens(t, tn, c, "memory:read").Body, "access_token")
	tx, err := e.DB.SQL().BeginTx(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(`LOCK TABLE oauth_tokens IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	r := e.Form("/oauth/revoke", url.Values{"token": {at}, "client_id": {c.ID}})
	took := time.Since(start)
	tx.Rollback()
	if r.Status != 503 || servertest.Str(r.Body, "error") != "temporarily_unavailable" {
		t.Errorf("revoke while locked: %d %s after %v, want 503", r.Status, r.Raw, took)
	}
	soak.Gate(t, took <= store.QueryTimeout+time.Second, "revoke took %v", took)
	if s := e.MCPStatus(at); s != 200 {
		t.Errorf("the token after a failed revocation: HTTP %d, want still active", s)
	}
	if n := e.CountRows(`audit_events WHERE action = 'oauth_token.revoke'`); n != 0 {
		t.Errorf("%d revocation audit rows for a revocation that failed", n)
	}
}

// Row DB-06: (1) a session holds ACCESS EXCLUSIVE on document_sources
// while 64 clients read with an 8-connection pool: each read fails at the
// database deadline with store_unavailable, /readyz answers 503 while the
// pool is exhausted, and reads succeed again within 2 s of the release.
// (2) Reads held at GitHub with a 4-connection pool: all of them wait there
// at once, with no connection in use (none is held during the provider
// call), and succeed when released. Default: lock held 5 s, 16 held reads;
// scripts/soak: 30 s, 64.
func TestDB06LockAndPoolDiscipline(t *testing.T) {
	t.Parallel()
	e := servertest.New(t, func(c *server.Config) {
		c.ToolRate, c.ToolBurst, c.GitHubInFlight, c.GitHubHourlyBudget = 1e6, 1e6, 512, 1e6
	})
	tn := e.NewTenant("o", "r")
	e.GH.AddFile("o", "r", servertest.CommitA, "a.md", []byte("hello"))
	src := e.AddSource(tn, "runtime", "a.md", servertest.CommitA, "", 65536)
	tok := e.Token(tn, "documents:read")
	read := func() servertest.Reply {
		return e.RPC(tok, "tools/call", map[string]any{"name": "git_document_get", "arguments": map[string]any{"source_id": src}})
	}
	if c := servertest.RPCOutcome(read()); c != "ok" {
		t.Fatalf("warm-up read: %s", c)
	}

	// (1) The lock.
	e.DB.SQL().SetMaxOpenConns(8)
	lockFor := soak.Scaled(5*time.Second, 30*time.Second)
	locker, err := e.DB.SQL().Conn(context.Background()) // the test's own session holds one of the 8
	if err != nil {
		t.Fatal(err)
	}
	tx, err := locker.BeginTx(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(`LOCK TABLE document_sources IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	released := time.Now().Add(lockFor)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var worst time.Duration
	codes := map[string]int{}
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			c := servertest.RPCOutcome(read())
			d := time.Since(start)
			mu.Lock()
			codes[c]++
			worst = max(worst, d)
			mu.Unlock()
			if c != "store_unavailable" {
				t.Errorf("read while document_sources is locked: %s", c)
			}
		}()
	}
	// /readyz is asked once the pool is exhausted: all 8 connections in use
	// and reads waiting for one (a condition, not a guess at timing). A read
	// takes a connection twice (its token, then its authorization, which
	// waits on the lock), so until every connection waits on the lock one
	// may still come free; /readyz is asked again until it answers 503 or
	// the lock is about to be released.
	readyz := 0
	for time.Now().Before(released.Add(-time.Second)) && readyz != http.StatusServiceUnavailable {
		if st := e.DB.SQL().Stats(); st.InUse < 8 || st.WaitCount == 0 {
			time.Sleep(5 * time.Millisecond)
			continue
		}
		resp, err := http.Get(e.Srv.URL + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		readyz = resp.StatusCode
	}
	wg.Wait()
	time.Sleep(time.Until(released))
	tx.Rollback()
	locker.Close()
	releasedAt := time.Now()
	var back time.Duration
	for {
		if servertest.RPCOutcome(read()) == "ok" {
			back = time.Since(releasedAt)
			break
		}
		if time.Since(releasedAt) > 5*time.Second {
			t.Fatal("reads did not recover within 5 s of the release")
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("DB-06(1): 64 reads with document_sources locked and 8 connections: %v, slowest %v (deadline %v); /readyz %d; "+
		"reads succeed %v after the release", codes, worst.Round(time.Millisecond), store.QueryTimeout, readyz, back.Round(time.Millisecond))
	// Usually every read fails at the deadline (3.0–3.3 s). Rarely, under CPU
	// contention, database/sql hands a freed connection to a request whose
	// context expires at that instant; lib/pq then sends its CancelRequest
	// before the query, PostgreSQL ignores it, and the query waits for the
	// lock until the store's I/O bound (QueryTimeout + 250 ms): about 2× the
	// deadline (6.3 s measured). docs/security-tests.md records it as open.
	if worst > 2*store.QueryTimeout+time.Second {
		t.Errorf("a read took %v, past twice the database deadline", worst)
	} else if worst > store.QueryTimeout+1500*time.Millisecond {
		t.Logf("DB-06(1): one read took %v: the expired-context race (see the comment)", worst)
	}
	if readyz != 503 {
		t.Errorf("/readyz with the pool exhausted: %d, want 503", readyz)
	}
	soak.Gate(t, back <= 2*time.Second, "reads recovered %v after the release, want ≤ 2s", back)

	// (2) GitHub holds every read and the pool has 4 connections: if a read
	// kept its connection during the GitHub call, at most 4 reads could be
	// waiting at GitHub at once. All n are, with no connection in use; once
	// released, all succeed. No timing is involved: the reads wait at the
	// fake until the test lets them go.
	n := soak.Scaled(16, 64)
	e.DB.SQL().SetMaxOpenConns(4)
	release := e.GH.Hold("o", "r")
	codes = map[string]int{}
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := servertest.RPCOutcome(read())
			mu.Lock()
			codes[c]++
			mu.Unlock()
		}()
	}
	for deadline := time.Now().Add(60 * time.Second); e.GH.Held("o", "r") < n; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			release()
			wg.Wait()
			t.Fatalf("only %d of %d reads reached GitHub with 4 connections (%v): a connection is held during the GitHub call", e.GH.Held("o", "r"), n, codes)
		}
	}
	inUse := e.DB.SQL().Stats().InUse
	release()
	wg.Wait()
	t.Logf("DB-06(2): %d reads waiting at GitHub at once with 4 connections, %d connections in use meanwhile: %v", n, inUse, codes)
	if inUse != 0 || codes["ok"] != n {
		t.Errorf("with every read held at GitHub: %d connections in use, outcomes %v; want 0 and all ok", inUse, codes)
	}
}
