package server

import (
	"context"
	"strconv"
	"testing"
	"time"

	"heyaira/oauth"
)

// nothingIssued is a refusal gate's store for handlers tested without a
// database: no secret is known.
func nothingIssued(context.Context, []byte) (bool, error) { return false, nil }

// spend spends network's refusal bucket in g, as refusalBurst refused junk
// requests that each passed outside the lane.
func spend(t *testing.T, g *refusalGate, network string) {
	t.Helper()
	junk := oauth.Hash(oauth.NewSecret(oauth.PrefixAccess))
	for range refusalBurst {
		p, err := g.enter(t.Context(), network, junk)
		if err != nil || p.inLane {
			t.Fatalf("a request while the bucket lasts: lane %v, %v", p != nil && p.inLane, err)
		}
		if throttle, _ := p.refused(t.Context(), junk, false); throttle {
			t.Fatal("throttled within the burst")
		}
		p.leave()
	}
}

// TestRefusalGateLane: once a network's bucket is spent, a request waits for
// a lane slot, unless its token was accepted lately; a refusal forgets the
// token. The lane is held full (by as many spent networks, each holding the
// one slot a network may) and the waiting context is already done, so
// "waits" shows as an error at once, with no timing involved.
func TestRefusalGateLane(t *testing.T) {
	t.Parallel()
	t0 := time.Now()
	g := newRefusalGate(nothingIssued, func() time.Time { return t0 })
	const network = "198.51.100.7"
	good, junk := oauth.Hash(oauth.NewSecret(oauth.PrefixAccess)), oauth.Hash(oauth.NewSecret(oauth.PrefixAccess))
	g.accepted(good)
	spend(t, g, network)
	var held []*passage
	for i := range refusalLane {
		other := "198.51.100." + strconv.Itoa(100+i)
		spend(t, g, other)
		p, err := g.enter(t.Context(), other, junk)
		if err != nil || !p.inLane {
			t.Fatalf("a request of the spent network: lane %v, %v", p != nil && p.inLane, err)
		}
		held = append(held, p)
	}
	done, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := g.enter(done, network, junk); err == nil {
		t.Error("junk did not wait for the full lane")
	}
	if p, err := g.enter(done, network, good); err != nil || p.inLane {
		t.Errorf("a token accepted lately waited for the lane: %v", err)
	}
	p := &passage{g: g, network: network}
	p.refused(t.Context(), good, false)
	if _, err := g.enter(done, network, good); err == nil {
		t.Error("a refused token still skips the lane")
	}
	for _, p := range held {
		p.leave()
	}
	if p, err := g.enter(done, network, junk); err != nil || !p.inLane {
		t.Errorf("after the lane emptied: lane %v, %v", p != nil && p.inLane, err)
	}
}
