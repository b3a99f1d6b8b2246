package server

import (
	"context"
	"encoding/base64"
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
//
// So junk costs the database at most one lookup per request while its
// network's bucket lasts, and then at most refusalLane lookups at a time,
// from however many networks: the rest of the pool stays with requests
// whose networks sent no junk.
type refusalGate struct {
	buckets *rateLimiter
	lane    chan struct{}
	issued  func(ctx context.Context, hash []byte) (bool, error)
	now     func() time.Time
}

// Refusals per bucket: a burst, then one a second. A client with a valid
// credential spends nothing.
const (
	refusalRate  = 1.0
	refusalBurst = 60
	refusalLane  = 4
)

func newRefusalGate(issued func(context.Context, []byte) (bool, error), now func() time.Time) *refusalGate {
	return &refusalGate{buckets: newRateLimiter(refusalRate, refusalBurst), lane: make(chan struct{}, refusalLane),
		issued: issued, now: now}
}

// passage is one request's way through the gate.
type passage struct {
	g       *refusalGate
	network string
	inLane  bool
}

// enter admits a request from network. When the network's bucket is spent
// it waits for a lane slot, or until ctx ends (the error). Call leave when
// the credential has been checked.
func (g *refusalGate) enter(ctx context.Context, network string) (*passage, error) {
	p := &passage{g: g, network: network}
	if _, ok := g.buckets.peek(network, g.now()); ok {
		return p, nil
	}
	select {
	case g.lane <- struct{}{}:
		p.inLane = true
		return p, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// leave gives back the lane slot, if the request held one.
func (p *passage) leave() {
	if p.inLane {
		<-p.g.lane
		p.inLane = false
	}
}

// refused charges the refusal of the credential whose SHA-256 is hash (nil
// when the request named none) and reports whether the caller must get 429,
// with the wait, instead of its usual answer. issued says the caller already
// knows the server issued the secret; otherwise the store is asked. A store
// that cannot answer counts the secret as junk.
func (p *passage) refused(ctx context.Context, hash []byte, issued bool) (throttle bool, wait time.Duration) {
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
