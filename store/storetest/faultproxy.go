package storetest

import (
	"bytes"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

type proxyMode int32

const (
	proxyPass proxyMode = iota
	proxyBlackhole
	proxyReset
)

// FaultProxy is a proxy with switchable faults, on a loopback TCP port in
// front of a TCP or unix-socket address, for the fault-injection tests of
// docs/security-tests.md (DB-01, DB-04, DB-06, PF-04; T6 and T7 in its
// fault-injection table). It is the toxiproxy pattern in standard-library
// code: it sits in front of PostgreSQL or the fake GitHub and, on command,
//
//   - blackholes: accepts connections and swallows every byte both ways,
//     without FIN or RST (a network partition);
//   - resets: closes every connection with an RST and resets new ones;
//   - drops after N bytes: cuts a new connection (RST) once N bytes have
//     gone from the server to the client;
//   - drops the reply after a marker: once the client sends bytes that
//     contain the marker (e.g. "COMMIT"), they are delivered but nothing
//     more comes back and the connection is cut (a reply lost after the
//     server acted on the request).
type FaultProxy struct {
	t    testing.TB
	ln   net.Listener
	dial func() (net.Conn, error)

	mode        atomic.Int32
	dropAfter   atomic.Int64 // server→client bytes per new connection; 0 = off
	accepted    atomic.Int64
	replyMarker atomic.Pointer[[]byte]
	markerHits  atomic.Int64

	mu    sync.Mutex
	conns map[*proxyConn]struct{}
	wg    sync.WaitGroup
}

// proxyConn is one client connection and its upstream.
type proxyConn struct {
	client, server net.Conn
	once           sync.Once
	replyCut       atomic.Bool   // set by DropReplyAfter: nothing more reaches the client
	replied        chan struct{} // closed when the server answers after the cut
	repliedOnce    sync.Once
	closed         chan struct{} // closed by close
}

// close ends both sides; with rst the client side gets an RST, not a FIN.
func (c *proxyConn) close(rst bool) {
	c.once.Do(func() {
		close(c.closed)
		if rst {
			if tc, ok := c.client.(*net.TCPConn); ok {
				tc.SetLinger(0)
			}
		}
		c.client.Close()
		if c.server != nil {
			c.server.Close()
		}
	})
}

// NewFaultProxy listens on 127.0.0.1 and forwards to what dial returns.
// It stops at t.Cleanup.
func NewFaultProxy(t testing.TB, dial func() (net.Conn, error)) *FaultProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &FaultProxy{t: t, ln: ln, dial: dial, conns: map[*proxyConn]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(func() {
		ln.Close()
		p.closeAll(false)
		p.wg.Wait()
	})
	return p
}

// ProxyTo forwards to a network address ("tcp", "127.0.0.1:5432" or
// "unix", "/path/.s.PGSQL.5432").
func ProxyTo(t testing.TB, network, addr string) *FaultProxy {
	return NewFaultProxy(t, func() (net.Conn, error) { return net.DialTimeout(network, addr, 5*time.Second) })
}

// Addr is the proxy's host:port.
func (p *FaultProxy) Addr() string { return p.ln.Addr().String() }

// DBURL is dbURL (a unix-socket URL of this package) rewritten to reach the
// same database through p, which must forward to that database's socket
// (ProxyTo(t, "unix", UnixSocket(t, dbURL))). Append further parameters
// with "&".
func (p *FaultProxy) DBURL(dbURL string) string {
	u, _ := url.Parse(dbURL)
	return "postgres://postgres@" + p.Addr() + u.Path + "?sslmode=disable"
}

// Accepted counts the client connections the proxy has accepted.
func (p *FaultProxy) Accepted() int64 { return p.accepted.Load() }

// Pass forwards normally again (connections already cut stay cut).
func (p *FaultProxy) Pass() {
	p.mode.Store(int32(proxyPass))
	p.dropAfter.Store(0)
	p.replyMarker.Store(nil)
}

// Blackhole swallows all traffic of existing and new connections.
func (p *FaultProxy) Blackhole() { p.mode.Store(int32(proxyBlackhole)) }

// Reset sends an RST on every open connection and on every new one.
func (p *FaultProxy) Reset() {
	p.mode.Store(int32(proxyReset))
	p.closeAll(true)
}

// DropAfter cuts each new connection once n bytes went server→client.
func (p *FaultProxy) DropAfter(n int64) { p.dropAfter.Store(n) }

// DropReplyAfter cuts a connection right after the client sent marker:
// the server receives the request, the client never hears back.
func (p *FaultProxy) DropReplyAfter(marker string) {
	m := []byte(marker)
	p.replyMarker.Store(&m)
}

// MarkerHits counts connections cut by DropReplyAfter.
func (p *FaultProxy) MarkerHits() int64 { return p.markerHits.Load() }

func (p *FaultProxy) closeAll(rst bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.close(rst)
		delete(p.conns, c)
	}
}

func (p *FaultProxy) accept() {
	defer p.wg.Done()
	for {
		cc, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.accepted.Add(1)
		c := &proxyConn{client: cc, replied: make(chan struct{}), closed: make(chan struct{})}
		switch proxyMode(p.mode.Load()) {
		case proxyReset:
			c.close(true)
			continue
		case proxyBlackhole:
			// Hold the connection open and swallow what it sends.
			p.track(c)
			p.wg.Add(1)
			go func() { defer p.wg.Done(); p.swallow(c) }()
			continue
		}
		sc, err := p.dial()
		if err != nil {
			c.close(true)
			continue
		}
		c.server = sc
		p.track(c)
		limit := p.dropAfter.Load()
		p.wg.Add(2)
		go func() { defer p.wg.Done(); p.pipe(c, cc, sc, true, 0) }()
		go func() { defer p.wg.Done(); p.pipe(c, sc, cc, false, limit) }()
	}
}

func (p *FaultProxy) track(c *proxyConn) {
	p.mu.Lock()
	p.conns[c] = struct{}{}
	p.mu.Unlock()
}

func (p *FaultProxy) untrack(c *proxyConn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
}

// swallow reads from a blackholed client until it goes away or the proxy
// passes again (it stays cut: the client has no upstream).
func (p *FaultProxy) swallow(c *proxyConn) {
	defer p.untrack(c)
	buf := make([]byte, 4096)
	for {
		if _, err := c.client.Read(buf); err != nil {
			c.close(false)
			return
		}
	}
}

// pipe copies src to dst. toServer says the direction; limit > 0 cuts the
// connection after that many bytes reached the client.
func (p *FaultProxy) pipe(c *proxyConn, src, dst net.Conn, toServer bool, limit int64) {
	defer p.untrack(c)
	defer c.close(false)
	buf := make([]byte, 32<<10)
	var sent int64
	for {
		n, err := src.Read(buf)
		if n > 0 {
			chunk := buf[:n]
			if proxyMode(p.mode.Load()) == proxyBlackhole || (!toServer && c.replyCut.Load()) {
				if !toServer && c.replyCut.Load() {
					c.repliedOnce.Do(func() { close(c.replied) })
				}
				chunk = nil // swallowed: no data, no FIN, no RST
			}
			cut := false
			if toServer {
				if m := p.replyMarker.Load(); m != nil && bytes.Contains(chunk, *m) {
					// Cut the reply direction before the request leaves, so
					// no byte of the answer can reach the client.
					c.replyCut.Store(true)
					p.markerHits.Add(1)
					cut = true
				}
			}
			if !toServer && limit > 0 && sent+int64(len(chunk)) >= limit {
				dst.Write(chunk[:limit-sent])
				c.close(true)
				return
			}
			if len(chunk) > 0 {
				if _, werr := dst.Write(chunk); werr != nil {
					return
				}
				sent += int64(len(chunk))
			}
			if cut {
				// Drop the connection once the server has answered (it acted
				// on the request; the client never learns the outcome). Not
				// a fixed pause: on a loaded machine the server may take
				// longer, and closing first could lose the request itself.
				select {
				case <-c.replied:
				case <-c.closed: // the proxy is closing
				case <-time.After(60 * time.Second):
				}
				c.close(true)
				return
			}
		}
		if err != nil {
			return
		}
	}
}
