package server

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"heyaira/oauth"
	"heyaira/store"
)

// Client ID Metadata Documents (docs/oauth.md): a client names itself at
// /oauth/authorize by the https URL of a JSON document, which HeyAira
// fetches, validates and keeps as an oauth_clients row. Off unless the
// operator lists hosts in HEYAIRA_CIMD_HOSTS.

// Outbound fetch limits. A URL never seen before is fetched from its
// host's budget, so a flood of /authorize requests with made-up URLs costs
// each host a bounded number of fetches. Each client network (clientNetwork)
// and wide network (wideNetwork) may spend only its share of that budget,
// so that one network, or one provider's block of them, cannot spend what a
// new client of the host needs for its first fetch. A URL with a stored
// document is refetched from a budget of its own, which only requests
// naming that URL spend (once the document is stale), so made-up URLs on
// the same host cannot keep its users out.
const (
	cimdHostRate     = 1.0 / 6 // per second
	cimdHostBurst    = 10
	cimdNetworkRate  = 1.0 / 60
	cimdNetworkBurst = 3
	cimdWideRate     = 1.0 / 30
	cimdWideBurst    = 5
	cimdURLRate      = 1.0 / 60
	cimdURLBurst     = 3
	cimdMaxInFlight  = 4

	// cimdStaleFor is how long past its freshness a stored document is
	// still used while its refetch is throttled or fails for a reason that
	// may pass (fetched.transient): RFC 5861's stale-if-error. A day outlasts
	// an outage of the client's host or a flood of its URL, and bounds how
	// long a changed document can outlive the change. A document the host
	// now refuses (404, invalid, redirected) is not used.
	cimdStaleFor = 24 * time.Hour
)

// CIMD resolves client ID metadata documents. A nil *CIMD in Config means
// the feature is off.
type CIMD struct {
	hosts   map[string]bool
	client  *http.Client
	perHost *rateLimiter
	perURL  *rateLimiter
	slots   chan struct{}
	// Shares of each host's budget for never-seen URLs, keyed by
	// "network host"; newMu makes checking and charging the three buckets
	// one step.
	perNetwork *rateLimiter
	perWide    *rateLimiter
	newMu      sync.Mutex
}

// NewCIMD returns a resolver for documents on the given exact hostnames,
// or nil when there are none. dial and roots are for tests (a local TLS
// stand-in); production passes nil for both: the dialer that refuses every
// internal address (checkDialAddr) and the system's root certificates.
func NewCIMD(hosts []string, dial func(ctx context.Context, network, addr string) (net.Conn, error),
	roots *x509.CertPool) (*CIMD, error) {
	return newCIMD(hosts, dial, roots, cimdFetchTimeout)
}

func newCIMD(hosts []string, dial dialFunc, roots *x509.CertPool, timeout time.Duration) (*CIMD, error) {
	if len(hosts) == 0 {
		return nil, nil
	}
	c := &CIMD{hosts: map[string]bool{}, client: newCIMDHTTPClient(dial, roots, timeout),
		perHost: newRateLimiter(cimdHostRate, cimdHostBurst), perURL: newRateLimiter(cimdURLRate, cimdURLBurst),
		perNetwork: newRateLimiter(cimdNetworkRate, cimdNetworkBurst), perWide: newRateLimiter(cimdWideRate, cimdWideBurst),
		slots: make(chan struct{}, cimdMaxInFlight)}
	for _, h := range hosts {
		// A host is acceptable when a document URL on it would pass the gate.
		if _, err := oauth.CheckClientIDURL("https://"+h+"/client", map[string]bool{h: true}); err != nil {
			return nil, fmt.Errorf("HEYAIRA_CIMD_HOSTS: %q is not a lower-case DNS hostname", h)
		}
		c.hosts[h] = true
	}
	return c, nil
}

// cimdFailure is why a document could not be used, for the error page.
type cimdFailure struct {
	reason string
	wait   time.Duration // for cimdRateLimited
	status int           // for cimdBadStatus: the host's status
	err    error         // for cimdStoreFailed, logged
}

// cimdCaller is who asked for a document: its network and wide network
// (clientNetwork, wideNetwork), whose shares a never-seen URL spends.
type cimdCaller struct{ network, wide string }

// allowNew charges the fetch of a never-seen URL on host to the caller's
// shares and to the host's budget, or reports the wait of the first that
// is spent. A refused fetch charges nothing.
func (c *CIMD) allowNew(host string, from cimdCaller, now time.Time) (time.Duration, bool) {
	c.newMu.Lock()
	defer c.newMu.Unlock()
	network, wide := from.network+" "+host, from.wide+" "+host
	if wait, ok := c.perNetwork.peek(network, now); !ok {
		return wait, false
	}
	if wait, ok := c.perWide.peek(wide, now); !ok {
		return wait, false
	}
	if wait, ok := c.perHost.allow(host, now); !ok {
		return wait, false
	}
	c.perNetwork.allow(network, now)
	c.perWide.allow(wide, now)
	return 0, true
}

// resolve returns the client for a document URL: the stored row while it
// is fresh, else a new fetch, validated and saved. Failures are never
// stored, so the next authorization fetches again; within cimdStaleFor, a
// throttled or transiently failed refetch serves the stored row instead
// (stale is then true).
func (c *CIMD) resolve(ctx context.Context, st *store.DB, now time.Time, url string, from cimdCaller) (row store.CIMDClient, stale bool, fail *cimdFailure) {
	host, err := oauth.CheckClientIDURL(url, c.hosts)
	if err != nil {
		return store.CIMDClient{}, false, &cimdFailure{reason: err.Error()}
	}
	row, err = st.CIMDClientByURL(ctx, url)
	switch {
	case err == nil && now.Before(row.FreshUntil):
		return row, false, nil
	case err != nil && !errors.Is(err, store.ErrNotFound):
		return store.CIMDClient{}, false, &cimdFailure{reason: cimdStoreFailed, err: err}
	}
	known := err == nil
	// orStale answers a refetch that failed with f: the stored row, when the
	// failure may pass and the row is recent enough.
	orStale := func(f *cimdFailure, transient bool) (store.CIMDClient, bool, *cimdFailure) {
		if known && transient && now.Before(row.FreshUntil.Add(cimdStaleFor)) {
			return row, true, nil
		}
		return store.CIMDClient{}, false, f
	}
	// The fetch slot first: a fetch refused for want of one charges no budget.
	select {
	case c.slots <- struct{}{}:
		defer func() { <-c.slots }()
	default:
		return orStale(&cimdFailure{reason: cimdRateLimited, wait: time.Second}, true)
	}
	var wait time.Duration
	var ok bool
	if known {
		wait, ok = c.perURL.allow(url, now)
	} else {
		wait, ok = c.allowNew(host, from, now)
	}
	if !ok {
		return orStale(&cimdFailure{reason: cimdRateLimited, wait: wait}, true)
	}
	f, reason := fetchCIMDocument(ctx, c.client, url)
	if reason != "" {
		return orStale(&cimdFailure{reason: reason, status: f.status}, f.transient(reason))
	}
	doc, reason := parseCIMDocument(url, f.body)
	if reason != "" {
		return store.CIMDClient{}, false, &cimdFailure{reason: reason}
	}
	saved, err := st.SaveCIMDClient(ctx, store.CIMDClient{
		Client: doc, URL: url, FetchedAt: now, FreshUntil: now.Add(cimdFreshFor(f.cacheControl)),
	})
	if err != nil {
		return orStale(&cimdFailure{reason: cimdStoreFailed, err: err}, true)
	}
	return saved, false, nil
}

// cimdAuthorizeClient resolves a URL client_id at /oauth/authorize, CIMD
// on. On failure it writes an error page, never a redirect: the redirect
// URI is not yet trusted.
func cimdAuthorizeClient(w http.ResponseWriter, r *http.Request, logger *slog.Logger, cfg *Config, st *store.DB,
	id string) (store.Client, bool) {
	c, stale, fail := cfg.CIMD.resolve(r.Context(), st, cfg.Now(), id, cimdCaller{clientNetwork(r), wideNetwork(r)})
	if fail == nil {
		if stale {
			addLog(r.Context(), slog.String("cimd", "stale"))
		}
		return c.Client, true
	}
	addLog(r.Context(), slog.String("code", fail.reason))
	// The host is one the operator listed (or "" when the URL failed the
	// gate): the log and the page name it and the reason, never text of the
	// document.
	host, _ := oauth.CheckClientIDURL(id, cfg.CIMD.hosts)
	if fail.reason != cimdStoreFailed && fail.reason != cimdRateLimited {
		logger.WarnContext(r.Context(), "cimd document unusable", "req_id", requestID(r.Context()),
			"host", host, "reason", fail.reason, "status", fail.status)
	}
	// The page says what the administrator must do: a client that uses a
	// metadata document (Claude Code, Codex) never falls back to registering
	// itself, so without the administrator it waits on this page for good.
	unlist := "remove " + host + " from HEYAIRA_CIMD_HOSTS so that the application registers itself instead."
	reach := "must let the server reach https://" + host + ", or " + unlist
	status := http.StatusBadRequest
	msg := "This server could not use the document that describes the application (reason: " + fail.reason + ")."
	switch fail.reason {
	case cimdStoreFailed:
		unavailable(w, r, logger, "cimd client store failed", fail.err)
		return store.Client{}, false
	case cimdRateLimited:
		wait := int(fail.wait.Seconds()) + 1
		w.Header().Set("Retry-After", strconv.Itoa(wait))
		status = http.StatusTooManyRequests
		msg = "This server is fetching application descriptions from " + host + " too often right now (reason: " +
			fail.reason + "). Try again from your application in " + strconv.Itoa(wait) + " seconds. " +
			"If it keeps failing, the server may be unable to reach " + host + ": your administrator " + reach
	case cimdTimeout, cimdForbiddenAddr, cimdFetchFailed:
		status = http.StatusBadGateway
		msg = "This server could not fetch this application's description from " + host + " (reason: " + fail.reason + "). " +
			"Your administrator " + reach + " Starting again will not help until then."
	case cimdRedirect, cimdTooLarge, cimdBadStatus, cimdBadContentType:
		status = http.StatusBadGateway
		msg = "This server fetched this application's description from " + host + ", but the answer cannot be used (reason: " +
			fail.reason + "). If starting again from your application does not help, your administrator can " + unlist
	case cimdInvalidJSON, cimdClientIDMismatch, cimdSecret, cimdAuthMethod, cimdInvalidDocument:
		msg = "The description this application publishes on " + host + " is not one this server accepts (reason: " + fail.reason +
			"). Your administrator can " + unlist
	default: // the URL itself was refused before any fetch
		msg += " Start again from your application; if it keeps failing, tell your administrator."
	}
	writeMessage(w, status, "Application not recognised", msg)
	return store.Client{}, false
}

// cimdConsent adds to the consent page what a metadata-document client
// shows: the URL as its id, the URL's host as its identity, and whether
// every redirect URI it lists is on the user's own computer.
func cimdConsent(p *oauth.ConsentPage, cfg *Config, id string, c store.Client) {
	if cfg.CIMD == nil || !oauth.IsClientIDURL(id) {
		return
	}
	p.ClientID = id
	p.ClientHost, _ = oauth.CheckClientIDURL(id, cfg.CIMD.hosts)
	remote := func(u string) bool { return !oauth.IsLoopbackRedirect(u) }
	p.AllLoopback = !slices.ContainsFunc(c.RedirectURIs, remote)
}
