package systemtest

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"heyaira/internal/app"
	"heyaira/internal/logbuf"
	"heyaira/store/storetest"
)

// The password of the database URLs below: it must never reach a log line.
const dbWaitSecret = "pw-never-logged-7f3a"

// TestServeWaitsForDatabase is start-up order: serve starts while nothing
// listens at the database's address, logs each attempt with its back-off,
// and becomes ready once the database appears there, with no restart.
func TestServeWaitsForDatabase(t *testing.T) {
	t.Parallel()
	dbURL := storetest.NewMigratedURL(t)
	u, _ := url.Parse(dbURL)
	addr := freeAddr(t) // nothing listens here yet
	env := baseEnv(t, "postgres://postgres:"+dbWaitSecret+"@"+addr+u.Path+"?sslmode=disable")
	var logs logbuf.Buffer
	base, stop := startServeBackground(t, env, &logs)

	waitCond(t, time.Minute, &logs, func() bool { return strings.Contains(logs.String(), `"attempt":2,`) })
	for _, want := range []string{`"msg":"database unreachable; waiting before trying again"`,
		`"attempt":1,"retry_in":"500ms"`, `"attempt":2,"retry_in":"1s"`, `"error_class":"unavailable"`, "connection refused"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the wait's log lacks %s:\n%s", want, logs.String())
		}
	}
	if strings.Contains(logs.String(), `"msg":"listening"`) {
		t.Fatalf("serve listened before its database answered:\n%s", logs.String())
	}

	forward(t, addr, storetest.UnixSocket(t, dbURL)) // PostgreSQL "comes up" at addr
	waitCond(t, time.Minute, &logs, func() bool {
		resp, err := http.Get(base + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	if !strings.Contains(logs.String(), `"msg":"database answers"`) || !strings.Contains(logs.String(), `"msg":"listening"`) {
		t.Errorf("logs lack the end of the wait:\n%s", logs.String())
	}
	if strings.Contains(logs.String(), dbWaitSecret) {
		t.Errorf("the database password is in the logs:\n%s", logs.String())
	}
	if err := stop(); err != nil {
		t.Errorf("serve after the wait: %v", err)
	}
}

// TestServeDatabaseWaitEnds: what answers and refuses fails at once, the
// wait limit ends the wait with an error naming it, and SIGTERM during the
// wait is a clean stop.
func TestServeDatabaseWaitEnds(t *testing.T) {
	t.Parallel()
	// failsAtOnce runs serve on dbURL and wants its error to hold want,
	// with no wait logged.
	failsAtOnce := func(t *testing.T, dbURL, want string) {
		env := baseEnv(t, dbURL)
		var logs logbuf.Buffer
		err := app.Serve(t.Context(), env.get, &logs, app.Hooks{})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("serve = %v, want a refusal naming %q", err, want)
		}
		noWait(t, &logs)
	}
	t.Run("wrong password fails at once", func(t *testing.T) {
		t.Parallel()
		failsAtOnce(t, "postgres://postgres:"+dbWaitSecret+"@"+refusingPostgres(t)+"/heyaira?sslmode=disable", "28P01")
	})
	t.Run("no such database fails at once", func(t *testing.T) {
		t.Parallel()
		u, _ := url.Parse(storetest.BaseURL(t))
		u.Path = "/heyaira_no_such_database"
		failsAtOnce(t, u.String(), "does not exist")
	})
	t.Run("the limit ends the wait", func(t *testing.T) {
		t.Parallel()
		env := baseEnv(t, "postgres://postgres:"+dbWaitSecret+"@"+freeAddr(t)+"/heyaira?sslmode=disable")
		env["HEYAIRA_DB_WAIT_SECONDS"] = "1"
		var logs logbuf.Buffer
		err := app.Serve(t.Context(), env.get, &logs, app.Hooks{})
		if err == nil || !strings.Contains(err.Error(), "HEYAIRA_DB_WAIT_SECONDS=1") || !strings.Contains(err.Error(), "connection refused") {
			t.Errorf("serve with a 1 s wait and no database = %v, want an error naming the limit and the cause", err)
		}
		if !strings.Contains(logs.String(), `"attempt":1,`) || strings.Contains(logs.String()+err.Error(), dbWaitSecret) {
			t.Errorf("logs of a limited wait (one attempt logged, no password):\n%s", logs.String())
		}
	})
	t.Run("a bad limit is refused", func(t *testing.T) {
		t.Parallel()
		env := baseEnv(t, "postgres://unused")
		env["HEYAIRA_DB_WAIT_SECONDS"] = "soon"
		if err := app.Serve(t.Context(), env.get, io.Discard, app.Hooks{}); err == nil || !strings.Contains(err.Error(), "HEYAIRA_DB_WAIT_SECONDS") {
			t.Errorf("serve with %s=soon = %v, want an error naming it", "HEYAIRA_DB_WAIT_SECONDS", err)
		}
	})
	t.Run("SIGTERM while waiting exits 0", func(t *testing.T) {
		t.Parallel()
		env := baseEnv(t, "postgres://postgres@"+freeAddr(t)+"/heyaira?sslmode=disable")
		var logs logbuf.Buffer
		_, stop := startServeBackground(t, env, &logs)
		waitCond(t, time.Minute, &logs, func() bool { return strings.Contains(logs.String(), `"attempt":1,`) })
		if err := stop(); err != nil {
			t.Errorf("serve stopped while waiting = %v, want nil (exit 0)", err)
		}
		if !strings.Contains(logs.String(), `"msg":"stopped while waiting for the database"`) {
			t.Errorf("logs lack the stop:\n%s", logs.String())
		}
	})
}

// startServeBackground runs serve on a listener of its own without waiting
// for anything; it returns the base URL, a stop that cancels serve and
// returns its result (within a minute), and the cancel alone.
func startServeBackground(t *testing.T, env testEnv, logs *logbuf.Buffer) (string, func() error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	env["HEYAIRA_PUBLIC_URL"] = base
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- app.Serve(ctx, env.get, logs, app.Hooks{Listener: ln}) }()
	stop := sync.OnceValue(func() error {
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(time.Minute):
			return errors.New("serve did not return within a minute of its cancel")
		}
	})
	t.Cleanup(func() { stop() })
	return base, stop
}

// waitCond polls cond (every 20 ms) until it holds; a generous bound, not
// a timing assumption.
func waitCond(t *testing.T, bound time.Duration, logs *logbuf.Buffer, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(bound); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %s; logs:\n%s", bound, logs.String())
		}
	}
}

func noWait(t *testing.T, logs *logbuf.Buffer) {
	t.Helper()
	if strings.Contains(logs.String(), "waiting") {
		t.Errorf("serve waited for a database that answered and refused:\n%s", logs.String())
	}
}

// forward listens on addr and pipes each connection to the unix socket.
func forward(t *testing.T, addr, socket string) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listen on the database's address %s: %v", addr, err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("unix", socket)
			if err != nil {
				c.Close()
				continue
			}
			mu.Lock()
			conns = append(conns, c, s)
			mu.Unlock()
			wg.Add(2)
			go func() { defer wg.Done(); io.Copy(s, c); s.Close() }()
			go func() { defer wg.Done(); io.Copy(c, s); c.Close() }()
		}
	}()
}

// refusingPostgres is a server that speaks just enough of PostgreSQL's
// protocol to refuse every start-up as a wrong password does (SQLSTATE
// 28P01). It returns its address.
func refusingPostgres(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.SetDeadline(time.Now().Add(time.Minute))
			var n uint32
			if binary.Read(c, binary.BigEndian, &n) == nil && n >= 8 && n < 10000 {
				io.CopyN(io.Discard, c, int64(n-4)) // the start-up message
				body := "SFATAL\x00C28P01\x00Mpassword authentication failed for user \"postgres\"\x00\x00"
				msg := binary.BigEndian.AppendUint32([]byte{'E'}, uint32(4+len(body)))
				c.Write(append(msg, body...))
			}
			c.Close()
		}
	}()
	return ln.Addr().String()
}
