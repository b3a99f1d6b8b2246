package servertest

import (
	"net/netip"
	"strconv"

	"heyaira/server"
)

// DistinctNetwork is the i-th of 512 client addresses, each in a /24 of its
// own (198.18.0.0/15), so in a network and a wide network of its own: for
// tests whose point is not a network's share of a host's budget.
func DistinctNetwork(i int) string {
	return "198." + strconv.Itoa(18+i/256%2) + "." + strconv.Itoa(i%256) + ".1"
}

// TrustLoopback makes the test client's own address (127.0.0.1) a trusted
// proxy, so that X-Forwarded-For names the client.
func TrustLoopback(c *server.Config) {
	c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
}

// V6 is the address of one /64 whose last 16 bits are i.
func V6(prefix string, i int) string {
	a := netip.MustParseAddr(prefix).As16()
	a[14], a[15] = byte(i>>8), byte(i)
	return netip.AddrFrom16(a).String()
}
