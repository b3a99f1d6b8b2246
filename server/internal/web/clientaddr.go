package web

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
)

// WithClientAddr works out the client's address once per request. When the
// connecting peer is a trusted proxy, it is the right-most X-Forwarded-For
// entry that is not itself trusted; otherwise the header is ignored and it is
// the peer. The result is for rate limiting and logs only: it never builds a
// URL and never authorizes anything.
func WithClientAddr(trusted []netip.Prefix, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		addr := ClientAddr(r, trusted)
		AddLog(r.Context(), slog.String("client_addr", addr))
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), clientAddrKey, addr)))
	})
}

func ClientAddr(r *http.Request, trusted []netip.Prefix) string {
	addr := HostOf(r.RemoteAddr)
	if !isTrusted(addr, trusted) {
		return addr
	}
	hops := r.Header.Values("X-Forwarded-For")
	for i := len(hops) - 1; i >= 0; i-- {
		parts := strings.Split(hops[i], ",")
		for j := len(parts) - 1; j >= 0; j-- {
			a, err := netip.ParseAddr(strings.TrimSpace(parts[j]))
			if err != nil {
				// A hop a trusted proxy would never write: stop at the
				// last address we could vouch for.
				return addr
			}
			addr = a.Unmap().String()
			if !isTrusted(addr, trusted) {
				return addr
			}
		}
	}
	return addr
}

func isTrusted(addr string, trusted []netip.Prefix) bool {
	a, err := netip.ParseAddr(addr)
	if err != nil {
		return false
	}
	a = a.Unmap()
	return slices.ContainsFunc(trusted, func(p netip.Prefix) bool { return p.Contains(a) })
}

// HostOf is hostport's host, or hostport itself when it has no port.
func HostOf(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return hostport
}

// clientAddress is the client's address (WithClientAddr); a handler
// reached without that middleware falls back to the peer.
func clientAddress(r *http.Request) string {
	if a, ok := r.Context().Value(clientAddrKey).(string); ok {
		return a
	}
	return HostOf(r.RemoteAddr)
}

// ClientNetwork is what the server's per-address limits are keyed by: the
// client's IPv4 address, or its IPv6 address cut to the /64. A /64 is what
// one host or one customer gets, so a host that rotates through its
// addresses still meets the limits of one.
func ClientNetwork(r *http.Request) string { return NetworkOf(clientAddress(r), 32, 64) }

// WideNetwork is a block a provider hands out in one piece, an IPv4 /24 or
// an IPv6 /48: registration gives each one a share of its server-wide
// budget (oauth_register.go).
func WideNetwork(r *http.Request) string { return NetworkOf(clientAddress(r), 24, 48) }

// NetworkOf is addr's network of v4 or v6 bits: a whole IPv4 address is
// written as the address. An address that does not parse is its own key.
func NetworkOf(addr string, v4, v6 int) string {
	a, err := netip.ParseAddr(addr)
	if err != nil {
		return addr
	}
	a = a.Unmap()
	bits := v6
	if a.Is4() {
		bits = v4
	}
	if bits == a.BitLen() {
		return a.String()
	}
	p, _ := a.Prefix(bits)
	return p.String()
}
