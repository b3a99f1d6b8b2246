package web

import (
	"context"
	"testing"
)

// TestKeyedSlotsDropTheirLastShare: a key's share exists while a request
// holds or waits for one of its slots, and goes with its last user, so the
// map is bounded by the requests in progress.
func TestKeyedSlotsDropTheirLastShare(t *testing.T) {
	t.Parallel()
	var k KeyedSlots
	a, b := k.Join("p", 1), k.Join("p", 1)
	if a != b {
		t.Fatal("two users of one key got two shares")
	}
	if err := Take(context.Background(), a.Slots, nil); err != nil {
		t.Fatal(err)
	}
	<-a.Slots
	k.Leave("p", a)
	if len(k.m) != 1 {
		t.Errorf("%d shares while one user is left, want 1", len(k.m))
	}
	k.Leave("p", b)
	if len(k.m) != 0 {
		t.Errorf("%d shares once every user left, want 0", len(k.m))
	}
}
