package server

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"time"

	"heyaira/oauth"
	"heyaira/store"
)

// Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document;
// docs/oauth.md "Client ID Metadata Documents"). A client names itself at
// /oauth/authorize by the https URL of a JSON document; HeyAira fetches it,
// validates it and keeps it as an oauth_clients row. Off unless the operator
// lists hosts in HEYAIRA_CIMD_HOSTS.

// Outbound fetch limits: per allowlisted host, and in flight server-wide.
// A flood of /authorize requests with distinct URLs costs at most
// cimdHostBurst fetches per host, then one every six seconds.
const (
	cimdHostRate    = 1.0 / 6 // per second
	cimdHostBurst   = 10
	cimdMaxInFlight = 4
)

// CIMD resolves client ID metadata documents. A nil *CIMD in Config means
// the feature is off.
type CIMD struct {
	hosts   map[string]bool
	client  *http.Client
	perHost *rateLimiter
	slots   chan struct{}
}

// NewCIMD returns a resolver for documents on the given exact hostnames,
// or nil when there are none. dial and roots are for tests, which serve
// documents from a local TLS stand-in: production passes nil for both, and
// gets a dialer whose Control hook refuses every internal address and the
// system's root certificates.
func NewCIMD(hosts []string, dial func(ctx context.Context, network, addr string) (net.Conn, error),
	roots *x509.CertPool) (*CIMD, error) {
	return newCIMD(hosts, dial, roots, cimdFetchTimeout)
}

func newCIMD(hosts []string, dial dialFunc, roots *x509.CertPool, timeout time.Duration) (*CIMD, error) {
	if len(hosts) == 0 {
		return nil, nil
	}
	c := &CIMD{hosts: map[string]bool{}, client: newCIMDHTTPClient(dial, roots, timeout),
		perHost: newRateLimiter(cimdHostRate, cimdHostBurst), slots: make(chan struct{}, cimdMaxInFlight)}
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
	err    error         // for cimdStoreFailed, logged
}

// resolve returns the client for a document URL: the stored row while it
// is fresh, else a new fetch, validated and saved. Failures are never
// stored, so the next authorization fetches again.
func (c *CIMD) resolve(ctx context.Context, st *store.DB, now time.Time, url string) (store.CIMDClient, *cimdFailure) {
	host, err := oauth.CheckClientIDURL(url, c.hosts)
	if err != nil {
		return store.CIMDClient{}, &cimdFailure{reason: err.Error()}
	}
	row, err := st.CIMDClientByURL(ctx, url)
	switch {
	case err == nil && now.Before(row.FreshUntil):
		return row, nil
	case err != nil && !errors.Is(err, store.ErrNotFound):
		return store.CIMDClient{}, &cimdFailure{reason: cimdStoreFailed, err: err}
	}
	if wait, ok := c.perHost.allow(host, now); !ok {
		return store.CIMDClient{}, &cimdFailure{reason: cimdRateLimited, wait: wait}
	}
	select {
	case c.slots <- struct{}{}:
		defer func() { <-c.slots }()
	default:
		return store.CIMDClient{}, &cimdFailure{reason: cimdRateLimited, wait: time.Second}
	}
	f, reason := fetchCIMDocument(ctx, c.client, url)
	if reason != "" {
		return store.CIMDClient{}, &cimdFailure{reason: reason}
	}
	doc, reason := parseCIMDocument(url, f.body)
	if reason != "" {
		return store.CIMDClient{}, &cimdFailure{reason: reason}
	}
	saved, err := st.SaveCIMDClient(ctx, store.CIMDClient{
		Client: store.Client{Name: doc.name, RedirectURIs: doc.redirectURIs, GrantTypes: doc.grantTypes},
		URL:    url, FetchedAt: now, FreshUntil: now.Add(cimdFreshFor(f.cacheControl)),
	})
	if err != nil {
		return store.CIMDClient{}, &cimdFailure{reason: cimdStoreFailed, err: err}
	}
	return saved, nil
}

// cimdAuthorizeClient resolves a URL client_id at /oauth/authorize. On
// failure it writes an error page, never a redirect: the redirect URI is
// not yet trusted. With CIMD off, a URL is an unknown client, as before.
func cimdAuthorizeClient(w http.ResponseWriter, r *http.Request, logger *slog.Logger, cfg *Config, st *store.DB,
	id string) (store.Client, bool) {
	if cfg.CIMD == nil {
		addLog(r.Context(), slog.String("code", "invalid_client_or_redirect"))
		writeMessage(w, http.StatusBadRequest, "Invalid authorization request",
			"The application is not registered with this server. Start again from your application.")
		return store.Client{}, false
	}
	c, fail := cfg.CIMD.resolve(r.Context(), st, cfg.Now(), id)
	if fail == nil {
		return c.Client, true
	}
	addLog(r.Context(), slog.String("code", fail.reason))
	status := http.StatusBadRequest
	switch fail.reason {
	case cimdStoreFailed:
		logger.WarnContext(r.Context(), "cimd client store failed", "req_id", requestID(r.Context()), "err", fail.err)
		writeUnavailablePage(w)
		return store.Client{}, false
	case cimdRateLimited:
		w.Header().Set("Retry-After", strconv.Itoa(int(fail.wait.Seconds())+1))
		status = http.StatusTooManyRequests
	case cimdRedirect, cimdTooLarge, cimdTimeout, cimdForbiddenAddr, cimdBadStatus, cimdBadContentType, cimdFetchFailed:
		status = http.StatusBadGateway
	}
	writeMessage(w, status, "Application not recognised",
		"This server could not use the document that describes the application (reason: "+fail.reason+
			"). Start again from your application; if it keeps failing, tell your administrator.")
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
	p.AllLoopback = true
	for _, u := range c.RedirectURIs {
		p.AllLoopback = p.AllLoopback && oauth.IsLoopbackRedirect(u)
	}
}
