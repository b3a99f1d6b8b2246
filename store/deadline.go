package store

import (
	"context"
	"net"
	"sync/atomic"
	"time"
)

// ioTimeout bounds every single wait for bytes from (or room towards)
// PostgreSQL. A context alone does not end a query that is waiting for the
// server: lib/pq cancels by asking the server, over a second connection, to
// stop, and keeps reading the first one until the server answers. A server
// that stopped answering (a network partition without RST, a frozen host)
// would hold the query, its pooled connection and the HTTP request forever.
// With this bound, such a read fails shortly after QueryTimeout, lib/pq
// marks the connection bad, and the caller gets ErrUnavailable
// (docs/security-tests.md, T6 blackhole).
const ioTimeout = QueryTimeout + 250*time.Millisecond

// deadlineDialer dials PostgreSQL and puts a fresh deadline on every Read
// and Write of the connection. Idle pooled connections have no pending
// read, so the deadline never ends a healthy idle connection.
type deadlineDialer struct {
	d       net.Dialer
	timeout atomic.Int64 // nanoseconds; raised for the duration of a longTx
}

func newDeadlineDialer() *deadlineDialer {
	d := &deadlineDialer{d: net.Dialer{KeepAlive: 15 * time.Second}}
	d.timeout.Store(int64(ioTimeout))
	return d
}

// Dial implements pq.Dialer.
func (d *deadlineDialer) Dial(network, address string) (net.Conn, error) {
	return d.DialContext(context.Background(), network, address)
}

// DialTimeout implements pq.Dialer.
func (d *deadlineDialer) DialTimeout(network, address string, timeout time.Duration) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return d.DialContext(ctx, network, address)
}

// DialContext implements pq.DialerContext, which lib/pq prefers.
func (d *deadlineDialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	c, err := d.d.DialContext(ctx, network, address)
	if err != nil {
		return nil, err
	}
	return &deadlineConn{Conn: c, timeout: &d.timeout}, nil
}

type deadlineConn struct {
	net.Conn
	timeout *atomic.Int64
	writes  int
	cancel  bool // the connection carries a CancelRequest
}

// cancelTimeout bounds the wait for the server to close a connection that
// carried a CancelRequest. lib/pq sends one when a context ends during a
// query, and for a prepared statement the query does not return until the
// cancel connection is closed: against a server that stopped answering,
// that added a second ioTimeout to the request (6.25 s instead of 3.25 s in
// TestT6ProxyFaults). The request is already on the wire; waiting for the
// server to confirm it is only politeness, and a live server answers it in
// about a millisecond.
const cancelTimeout = 250 * time.Millisecond

// cancelRequest reports whether p is a PostgreSQL CancelRequest: length
// 16, then the code 80877102 (1234 << 16 | 5678).
func cancelRequest(p []byte) bool {
	return len(p) == 16 && p[0] == 0 && p[1] == 0 && p[2] == 0 && p[3] == 16 &&
		p[4] == 0x04 && p[5] == 0xd2 && p[6] == 0x16 && p[7] == 0x2e
}

func (c *deadlineConn) Read(p []byte) (int, error) {
	d := time.Duration(c.timeout.Load())
	if c.cancel {
		d = cancelTimeout
	}
	c.Conn.SetReadDeadline(time.Now().Add(d))
	return c.Conn.Read(p)
}

func (c *deadlineConn) Write(p []byte) (int, error) {
	if c.writes == 0 && cancelRequest(p) { // only ever the first message
		c.cancel = true
	}
	c.writes++
	c.Conn.SetWriteDeadline(time.Now().Add(time.Duration(c.timeout.Load())))
	return c.Conn.Write(p)
}
