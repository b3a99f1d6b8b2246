package storetest

import (
	"bufio"
	"encoding/binary"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// WireCounter sits on a unix socket between a client (the server under test)
// and PostgreSQL and counts what the client asks of the database, from the
// wire: it parses the frontend half of the protocol (message type and length)
// and copies the backend half untouched. It is how the benchmark harness
// measures database round trips per tool call and the server's open
// connections, from outside the process and without trusting the server's
// own counters.
//
//   - A statement run is an Execute (extended protocol) or a simple Query.
//   - A preparation is a Parse: lib/pq parses an unprepared statement with
//     arguments on every call, a prepared one once per connection.
//   - A round trip is a Sync or a simple Query: the client waits for
//     ReadyForQuery after each. lib/pq needs two for an unprepared statement
//     with arguments (Parse/Describe, then Bind/Execute), one for a prepared
//     statement (Bind/Execute).
type WireCounter struct {
	ln       net.Listener
	dir      string // the socket directory: host= in a DSN
	target   string // the real socket
	parses   atomic.Int64
	executes atomic.Int64
	queries  atomic.Int64
	syncs    atomic.Int64
	open     atomic.Int64
	maxOpen  atomic.Int64
	accepted atomic.Int64
	wg       sync.WaitGroup
}

// WireCounts is a reading of a WireCounter.
type WireCounts struct {
	Statements int64 // Execute and Query messages
	Parses     int64 // Parse messages
	RoundTrips int64 // Sync and Query messages
	Open       int64 // connections open now
	MaxOpen    int64 // the most open at once since the start or ResetMaxOpen
	Accepted   int64 // connections accepted
}

// Sub returns the counts since base; Open and MaxOpen stay as read.
func (c WireCounts) Sub(base WireCounts) WireCounts {
	return WireCounts{Statements: c.Statements - base.Statements, Parses: c.Parses - base.Parses,
		RoundTrips: c.RoundTrips - base.RoundTrips, Open: c.Open, MaxOpen: c.MaxOpen, Accepted: c.Accepted - base.Accepted}
}

// NewWireCounter counts on the way to the unix socket of the cluster dbURL
// points at; it stops at t.Cleanup. Clients connect with DSN.
func NewWireCounter(t testing.TB, dbURL string) *WireCounter {
	t.Helper()
	target := UnixSocket(t, dbURL)
	dir, err := os.MkdirTemp("", "hyb") // short: a socket path has at most 107 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	ln, err := net.Listen("unix", filepath.Join(dir, filepath.Base(target)))
	if err != nil {
		t.Fatal(err)
	}
	p := &WireCounter{ln: ln, dir: dir, target: target}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(func() { ln.Close(); p.wg.Wait() })
	return p
}

// DSN is dbURL with its socket directory replaced by the counter's.
func (p *WireCounter) DSN(dbURL string) string {
	u, _ := url.Parse(dbURL)
	q := u.Query()
	q.Set("host", p.dir)
	u.RawQuery = q.Encode()
	return u.String()
}

// Counts reads the counters.
func (p *WireCounter) Counts() WireCounts {
	return WireCounts{Statements: p.executes.Load() + p.queries.Load(), Parses: p.parses.Load(),
		RoundTrips: p.syncs.Load() + p.queries.Load(),
		Open:       p.open.Load(), MaxOpen: p.maxOpen.Load(), Accepted: p.accepted.Load()}
}

// ResetMaxOpen starts a new high-water mark of open connections.
func (p *WireCounter) ResetMaxOpen() { p.maxOpen.Store(p.open.Load()) }

func (p *WireCounter) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.wg.Add(1)
		go p.serve(c)
	}
}

func (p *WireCounter) serve(client net.Conn) {
	defer p.wg.Done()
	defer client.Close()
	server, err := net.Dial("unix", p.target)
	if err != nil {
		return
	}
	defer server.Close()
	p.accepted.Add(1)
	n := p.open.Add(1)
	defer p.open.Add(-1)
	for m := p.maxOpen.Load(); n > m && !p.maxOpen.CompareAndSwap(m, n); m = p.maxOpen.Load() {
	}
	done := make(chan struct{})
	go func() {
		io.Copy(client, server) // backend → client, as is
		client.Close()
		close(done)
	}()
	p.frontend(bufio.NewReaderSize(client, 32<<10), bufio.NewWriterSize(server, 32<<10))
	server.Close()
	<-done
}

// frontend copies client → server message by message, counting types. The
// first messages have no type byte: an SSLRequest or GSSENCRequest (after
// which the server's one-byte answer passes back untouched) and then the
// StartupMessage. Writes are flushed whenever the client has nothing more
// buffered, so what the client sent in one write goes on in one write.
func (p *WireCounter) frontend(r *bufio.Reader, w *bufio.Writer) {
	var hdr [5]byte
	startup := true
	for {
		n := 5
		if startup {
			n = 4
		}
		if _, err := io.ReadFull(r, hdr[:n]); err != nil {
			return
		}
		length := binary.BigEndian.Uint32(hdr[n-4 : n])
		if length < 4 || length > 1<<30 {
			return
		}
		if _, err := w.Write(hdr[:n]); err != nil {
			return
		}
		body := int64(length) - 4
		if startup {
			var code [4]byte
			if body < 4 {
				return
			}
			if _, err := io.ReadFull(r, code[:]); err != nil {
				return
			}
			if _, err := w.Write(code[:]); err != nil {
				return
			}
			body -= 4
			// 80877103 is SSLRequest, 80877104 GSSENCRequest: a real
			// StartupMessage follows them.
			if v := binary.BigEndian.Uint32(code[:]); v != 80877103 && v != 80877104 {
				startup = false
			}
		} else {
			switch hdr[0] {
			case 'P':
				p.parses.Add(1)
			case 'E':
				p.executes.Add(1)
			case 'Q':
				p.queries.Add(1)
			case 'S':
				p.syncs.Add(1)
			}
		}
		if _, err := io.CopyN(w, r, body); err != nil {
			return
		}
		if r.Buffered() == 0 && w.Flush() != nil {
			return
		}
	}
}

// UnixSocket returns the PostgreSQL socket path of a unix-socket database URL
// (host=<dir>, port defaulting to 5432), as scripts/pg.sh and this package's
// private cluster make; it ends the test for any other URL.
func UnixSocket(t testing.TB, dbURL string) string {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	dir, port := u.Query().Get("host"), u.Port()
	if port == "" {
		port = u.Query().Get("port")
	}
	if port == "" {
		port = "5432"
	}
	if !strings.HasPrefix(dir, "/") {
		t.Fatalf("storetest: the database is not on a unix socket (host=/dir): %s", dbURL)
	}
	return filepath.Join(dir, ".s.PGSQL."+port)
}
