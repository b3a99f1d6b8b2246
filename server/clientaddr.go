package server

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// ParseTrustedProxies reads HEYAIRA_TRUSTED_PROXIES: comma-separated CIDRs
// (a bare address means a single host). Empty means no proxy is trusted.
func ParseTrustedProxies(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		p, err := netip.ParsePrefix(f)
		if err != nil {
			a, aerr := netip.ParseAddr(f)
			if aerr != nil {
				return nil, fmt.Errorf("HEYAIRA_TRUSTED_PROXIES: %q is not a CIDR or an address", f)
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// withClientAddr works out the client's address once per request. When the
// connecting peer is a trusted proxy, it is the right-most X-Forwarded-For
// entry that is not itself trusted; otherwise the header is ignored and it is
// the peer. The result is for rate limiting and logs only: it never builds a
// URL and never authorizes anything.
func withClientAddr(trusted []netip.Prefix, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		addr := clientAddr(r, trusted)
		addLog(r.Context(), slog.String("client_addr", addr))
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), clientAddrKey, addr)))
	})
}

func clientAddr(r *http.Request, trusted []netip.Prefix) string {
	peer := peerAddr(r)
	if len(trusted) == 0 || !isTrusted(peer, trusted) {
		return peer
	}
	hops := r.Header.Values("X-Forwarded-For")
	addr := peer
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
	for _, p := range trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

func peerAddr(r *http.Request) string {
	if h, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return h
	}
	return r.RemoteAddr
}

// remoteIP is the client's address for rate limiting (withClientAddr). A
// handler reached without that middleware falls back to the peer.
func remoteIP(r *http.Request) string {
	if a, ok := r.Context().Value(clientAddrKey).(string); ok {
		return a
	}
	return peerAddr(r)
}
