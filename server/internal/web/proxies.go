package web

import (
	"fmt"
	"net/netip"
	"strings"
)

// ParseTrustedProxies reads HEYAIRA_TRUSTED_PROXIES: comma-separated CIDRs
// (a bare address means a single host). Empty means no proxy is trusted.
// A /0 is refused: it would let every client choose its own address.
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
		if p.Bits() == 0 {
			return nil, fmt.Errorf("HEYAIRA_TRUSTED_PROXIES: %q trusts every address, so every client could choose the address its limits are charged to; list your proxies' own addresses", f)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// TrustedRanges returns the trusted entries that are ranges rather than one
// address, for a start-up warning: a client inside a trusted range can send
// X-Forwarded-For and choose the address its limits are charged to, so the
// list should hold only the proxies' own addresses.
func TrustedRanges(trusted []netip.Prefix) []string {
	var out []string
	for _, p := range trusted {
		if !p.IsSingleIP() {
			out = append(out, p.String())
		}
	}
	return out
}
