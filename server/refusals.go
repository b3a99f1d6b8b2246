package server

import (
	"context"
	"encoding/base64"
	"sync"
	"time"
)

// The rule every limiter in the server keeps (docs/limits.md): a failure is
// charged to what the caller controls, and a request that presents a valid
// credential is never refused because of failures made by others, whatever
// address it shares with them.
//
// A refusalGate limits refused credentials: bearer tokens at /mcp, codes and
// refresh tokens at /oauth/token.
//
//   - A refusal of a secret the server never issued (junk) charges the
//     bucket of the caller's network (clientNetwork). A refusal of a secret
//     it did issue (expired, revoked, used, or for another resource) charges
//     that secret's own bucket, which only its holder can spend.
//   - An empty bucket never refuses a request before its credential is
//     checked. The request waits for one of refusalLane slots, server-wide,
//     and is checked there: a valid credential is served; junk gets 429 with
//     Retry-After instead of its 400 or 401; an issued secret gets its usual
//     answer (so a client whose token expired still learns to refresh)
//     until its own bucket is spent.
//   - A network holds at most one lane slot at a time. Its other requests
//     wait in a queue of its own, before the lane, so however many it sends,
//     the lane's queue holds at most one request per spent network, and a
//     flood from one network leaves refusalLane-1 slots to the others.
//
// So junk costs the database at most one lookup per request while its
// network's bucket lasts, and then at most one lookup at a time per spent
// network and refusalLane at a time from however many networks: the rest
// of the pool stays with requests whose networks sent no junk.
//
// A bearer token that was valid at its last use on this replica skips the
// lane (seen): it is still checked against the database like any other, so
// this is no cache of grants, only of which hashes are worth a lookup ahead
// of the junk; a refusal forgets it. Measured with 32 junk senders on the
// token's own network and machine (BenchmarkValidTokenUnderJunk, 2 cores),
// it cut a valid call from 22.8 ms to 8.4 ms (1.0 ms without junk; the rest
// is the senders' own CPU).
type refusalGate struct {
	buckets *rateLimiter
	lane    chan struct{}
	issued  func(ctx context.Context, hash []byte) (bool, error)
	now     func() time.Time
	mu      sync.Mutex
	seen    map[[16]byte]struct{} // hashes of tokens accepted lately; at most maxSeen
	// queues holds, for each network with a request in the lane or waiting
	// for it, the network's one slot: the one request of the network that
	// may take or wait for a lane slot.
	queues keyedSlots
}

// Refusals per bucket: a burst, then one a second. A client with a valid
// credential spends nothing.
const (
	refusalRate  = 1.0
	refusalBurst = 60
	refusalLane  = 4
	maxSeen      = 8192 // tokens; emptied when full (about 0.5 MiB)
)

func newRefusalGate(issued func(context.Context, []byte) (bool, error), now func() time.Time) *refusalGate {
	return &refusalGate{buckets: newRateLimiter(refusalRate, refusalBurst), lane: make(chan struct{}, refusalLane),
		issued: issued, now: now, seen: map[[16]byte]struct{}{}}
}

// passage is one request's way through the gate.
type passage struct {
	g       *refusalGate
	network string
	inLane  bool
	queue   *share // the network's, while the request holds its slot
}

// enter admits a request from network that presents the credential whose
// SHA-256 is hash (nil if none). When the network's bucket is spent and the
// credential was not accepted lately, it waits for its network's slot and
// then for a lane slot, or until ctx ends (the error). Call leave when the
// credential has been checked.
func (g *refusalGate) enter(ctx context.Context, network string, hash []byte) (*passage, error) {
	p := &passage{g: g, network: network}
	if _, ok := g.buckets.peek(network, g.now()); ok || g.wasAccepted(hash) {
		return p, nil
	}
	q := g.queues.join(network, 1)
	if err := take(ctx, q.slots, nil); err != nil {
		g.queues.leave(network, q)
		return nil, err
	}
	if err := take(ctx, g.lane, nil); err != nil {
		<-q.slots
		g.queues.leave(network, q)
		return nil, err
	}
	p.inLane, p.queue = true, q
	return p, nil
}

// leave gives back the lane slot and the network's slot, if the request
// held them.
func (p *passage) leave() {
	if p.inLane {
		<-p.g.lane
		<-p.queue.slots
		p.g.queues.leave(p.network, p.queue)
		p.inLane, p.queue = false, nil
	}
}

// accepted records that the credential whose SHA-256 is hash was valid.
func (g *refusalGate) accepted(hash []byte) {
	if len(hash) < 16 {
		return
	}
	g.mu.Lock()
	if len(g.seen) >= maxSeen {
		clear(g.seen)
	}
	g.seen[[16]byte(hash[:16])] = struct{}{}
	g.mu.Unlock()
}

// forget drops hash from the tokens accepted lately.
func (g *refusalGate) forget(hash []byte) {
	if len(hash) < 16 {
		return
	}
	g.mu.Lock()
	delete(g.seen, [16]byte(hash[:16]))
	g.mu.Unlock()
}

func (g *refusalGate) wasAccepted(hash []byte) bool {
	if len(hash) < 16 {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	_, ok := g.seen[[16]byte(hash[:16])]
	return ok
}

// refused charges the refusal of the credential whose SHA-256 is hash (nil
// when the request named none) and reports whether the caller must get 429,
// with the wait, instead of its usual answer. issued says the caller already
// knows the server issued the secret; otherwise the store is asked. A store
// that cannot answer counts the secret as junk.
func (p *passage) refused(ctx context.Context, hash []byte, issued bool) (throttle bool, wait time.Duration) {
	p.g.forget(hash)
	if !issued && hash != nil {
		issued, _ = p.g.issued(ctx, hash)
	}
	issued = issued && len(hash) >= 16
	key := p.network
	if issued {
		key = "issued " + base64.RawURLEncoding.EncodeToString(hash[:16])
	}
	wait, ok := p.g.buckets.allow(key, p.g.now())
	return !ok, wait
}
