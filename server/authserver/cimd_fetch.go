package authserver

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The fetch of a client ID metadata document. The URL has passed
// oauth.CheckClientIDURL, so it is https on port 443 to an allowlisted
// host; this file makes sure the connection cannot reach anything else.

const (
	cimdMaxBody         = 5 * 1024 // the draft's recommended maximum (§6.6)
	CIMDFetchTimeout    = 10 * time.Second
	cimdResponseTimeout = 5 * time.Second
	cimdMaxHeaderBytes  = 16 << 10
	cimdUserAgent       = "HeyAira-CIMD/1"

	// Stable reasons a fetch fails, as for cimd_document.go.
	CIMDRedirect       = "cimd_redirect_refused"
	CIMDTooLarge       = "cimd_document_too_large"
	CIMDTimeout        = "cimd_fetch_timeout"
	CIMDForbiddenAddr  = "cimd_address_forbidden"
	CIMDBadStatus      = "cimd_fetch_status"
	CIMDBadContentType = "cimd_content_type"
	CIMDFetchFailed    = "cimd_fetch_failed"
	CIMDRateLimited    = "cimd_rate_limited"
	CIMDStoreFailed    = "cimd_unavailable"
	CIMDNotListed      = "cimd_client_not_listed"
)

var (
	errRedirectRefused = errors.New("cimd: redirects are refused")
	errForbiddenAddr   = errors.New("cimd: forbidden address")
)

// dialFunc is http.Transport.DialContext.
type dialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// forbiddenPrefixes are the destinations a metadata fetch must never reach,
// beyond what netip's predicates cover: "this network", shared address
// space (RFC 6598), IETF protocol assignments, benchmarking, reserved and
// broadcast; and the IPv6 forms that embed an IPv4 address the check would
// otherwise not see (IPv4-compatible, NAT64, 6to4, Teredo), discard-only,
// documentation and site-local.
var forbiddenPrefixes = func() []netip.Prefix {
	var out []netip.Prefix
	for _, s := range []string{"0.0.0.0/8", "100.64.0.0/10", "192.0.0.0/24", "192.0.2.0/24", "198.18.0.0/15",
		"198.51.100.0/24", "203.0.113.0/24", "240.0.0.0/4", "::/96", "64:ff9b::/96", "64:ff9b:1::/48",
		"100::/64", "2001::/32", "2001:db8::/32", "2002::/16", "fec0::/10"} {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}()

// forbiddenAddr reports whether a fetch may not connect to ip: loopback,
// private, shared, link-local (169.254.169.254, the cloud metadata
// service), multicast, unspecified, and the ranges above. An IPv4-mapped
// IPv6 address (::ffff:10.0.0.1) is judged as the IPv4 address it is.
func forbiddenAddr(ip netip.Addr) bool {
	ip = ip.Unmap()
	return !ip.IsValid() || ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() ||
		ip.IsLinkLocalMulticast() || ip.IsInterfaceLocalMulticast() || ip.IsMulticast() || ip.IsUnspecified() ||
		slices.ContainsFunc(forbiddenPrefixes, func(p netip.Prefix) bool { return p.Contains(ip) })
}

// checkDialAddr is the dialer's Control hook: it runs after name
// resolution, for the very address the socket is about to connect to, so
// a DNS answer that changes between two lookups (rebinding) is still
// checked. Only TCP to port 443 of a public address passes.
func checkDialAddr(network, address string, _ syscall.RawConn) error {
	if network != "tcp4" && network != "tcp6" {
		return errForbiddenAddr
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil || ap.Port() != 443 || forbiddenAddr(ap.Addr()) {
		return errForbiddenAddr
	}
	return nil
}

// NewCIMDDialer is the production dialer: name resolution by the system,
// every connected address checked by checkDialAddr.
func NewCIMDDialer() *net.Dialer {
	return &net.Dialer{Timeout: cimdResponseTimeout, Control: checkDialAddr}
}

// newCIMDHTTPClient is the fetcher's own client: never the default one,
// no proxy (a proxy would connect on our behalf, past the address check),
// no redirects, TLS with roots (nil: the system's), one deadline for the
// whole exchange, body included.
func newCIMDHTTPClient(dial dialFunc, roots *x509.CertPool, timeout time.Duration) *http.Client {
	if dial == nil {
		dial = NewCIMDDialer().DialContext
	}
	return &http.Client{
		Transport: &http.Transport{
			Proxy:                  nil,
			DialContext:            dial,
			TLSClientConfig:        &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12},
			TLSHandshakeTimeout:    cimdResponseTimeout,
			ResponseHeaderTimeout:  cimdResponseTimeout,
			MaxResponseHeaderBytes: cimdMaxHeaderBytes,
			MaxIdleConnsPerHost:    2,
			IdleConnTimeout:        30 * time.Second,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return errRedirectRefused },
		Timeout:       timeout,
	}
}

// fetched is a document as served.
type fetched struct {
	body         []byte
	cacheControl string
	status       int // the host's status, when it answered
}

// transient reports whether a fetch that failed with reason may succeed
// later: no answer in time, no connection, or a 5xx or 429 from the host.
func (f fetched) transient(reason string) bool {
	switch reason {
	case CIMDTimeout, CIMDFetchFailed:
		return true
	case CIMDBadStatus:
		return f.status >= 500 || f.status == http.StatusTooManyRequests
	}
	return false
}

// fetchCIMDocument GETs url and returns the body, or a stable reason.
func fetchCIMDocument(ctx context.Context, c *http.Client, url string) (fetched, string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fetched{}, CIMDFetchFailed
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", cimdUserAgent)
	resp, err := c.Do(req)
	if err != nil {
		return fetched{}, fetchErrorReason(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fetched{status: resp.StatusCode}, CIMDBadStatus
	}
	mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if err != nil || !(mt == "application/json" || strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json")) {
		return fetched{}, CIMDBadContentType
	}
	if resp.ContentLength > cimdMaxBody {
		return fetched{}, CIMDTooLarge
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, cimdMaxBody+1))
	if err != nil {
		return fetched{}, fetchErrorReason(err)
	}
	if len(body) > cimdMaxBody {
		return fetched{}, CIMDTooLarge
	}
	return fetched{body: body, cacheControl: resp.Header.Get("Cache-Control")}, ""
}

func fetchErrorReason(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, errRedirectRefused):
		return CIMDRedirect
	case errors.Is(err, errForbiddenAddr):
		return CIMDForbiddenAddr
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return CIMDTimeout
	}
	return CIMDFetchFailed
}

// Cache bounds (docs/oauth.md): a document is re-fetched after its
// max-age, kept between one minute and one day; one hour when the host
// says nothing; at every authorization when it says no-store or no-cache.
const (
	cimdCacheMin     = time.Minute
	cimdCacheMax     = 24 * time.Hour
	cimdCacheDefault = time.Hour
)

// cimdFreshFor is how long a valid document is used without a new fetch.
func cimdFreshFor(cacheControl string) time.Duration {
	d, seen := cimdCacheDefault, false
	for _, dir := range strings.Split(cacheControl, ",") {
		name, val, _ := strings.Cut(strings.TrimSpace(dir), "=")
		switch strings.ToLower(name) {
		case "no-store", "no-cache":
			return 0
		case "max-age":
			n, err := strconv.ParseInt(strings.Trim(val, `"`), 10, 64)
			if err != nil || n < 0 || seen {
				return 0 // malformed or repeated: do not cache
			}
			seen, d = true, time.Duration(min(n, int64(cimdCacheMax/time.Second)))*time.Second
		}
	}
	return min(max(d, cimdCacheMin), cimdCacheMax)
}
