package authserver

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
	"time"

	"heyaira/oauth"
	"heyaira/server/internal/web"
	"heyaira/store"
)

// Client ID Metadata Documents (docs/oauth.md): a client names itself at
// /oauth/authorize by the https URL of a JSON document, which HeyAira
// fetches, validates and keeps as an oauth_clients row. Only the exact URLs
// the operator lists in HEYAIRA_CIMD_CLIENTS are accepted: any other URL is
// refused before a fetch or a statement, so made-up URLs cost nothing and
// need no budget. Off unless the list is set.

// Each listed URL is refetched, once its stored document is stale, from a
// budget of its own, which only requests naming that URL spend.
const (
	CIMDURLRate  = 1.0 / 60 // per second
	CIMDURLBurst = 3

	// CIMDStaleFor is how long past its freshness a stored document is
	// still used while its refetch is throttled or fails for a reason that
	// may pass (fetched.transient): RFC 5861's stale-if-error. A day outlasts
	// an outage of the client's host or a flood of its URL, and bounds how
	// long a changed document can outlive the change. A document the host
	// now refuses (404, invalid, redirected) is not used.
	CIMDStaleFor = 24 * time.Hour
)

// CIMD resolves client ID metadata documents. A nil *CIMD in Config means
// the feature is off.
type CIMD struct {
	urls   map[string]string // listed URL → its host
	client *http.Client
	perURL *web.RateLimiter
}

// NewCIMD returns a resolver for documents at the given exact client-ID
// URLs, or nil when there are none. dial and roots are for tests (a local
// TLS stand-in); production passes nil for both: the dialer that refuses
// every internal address (checkDialAddr) and the system's root certificates.
func NewCIMD(urls []string, dial func(ctx context.Context, network, addr string) (net.Conn, error),
	roots *x509.CertPool) (*CIMD, error) {
	return NewCIMDWithTimeout(urls, dial, roots, CIMDFetchTimeout)
}

func NewCIMDWithTimeout(urls []string, dial dialFunc, roots *x509.CertPool, timeout time.Duration) (*CIMD, error) {
	if len(urls) == 0 {
		return nil, nil
	}
	c := &CIMD{urls: map[string]string{}, client: newCIMDHTTPClient(dial, roots, timeout),
		perURL: web.NewRateLimiter(CIMDURLRate, CIMDURLBurst)}
	for _, u := range urls {
		host, err := oauth.CheckClientIDURL(u)
		if err != nil {
			return nil, fmt.Errorf("HEYAIRA_CIMD_CLIENTS: %q is not a client-ID URL (%v)", u, err)
		}
		c.urls[u] = host
	}
	return c, nil
}

// listed reports whether url is one the operator listed (never, CIMD off).
func (c *CIMD) listed(url string) bool {
	if c == nil {
		return false
	}
	_, ok := c.urls[url]
	return ok
}

// cimdFailure is why a document could not be used, for the error page.
type cimdFailure struct {
	reason string
	wait   time.Duration // for CIMDRateLimited
	status int           // for CIMDBadStatus: the host's status
	err    error         // for CIMDStoreFailed, logged
}

// resolve returns the client for a document URL: the stored row while it
// is fresh, else a new fetch, validated and saved. Failures are never
// stored, so the next authorization fetches again; within CIMDStaleFor, a
// throttled or transiently failed refetch serves the stored row instead
// (stale is then true).
func (c *CIMD) resolve(ctx context.Context, st *store.DB, now time.Time, url string) (row store.CIMDClient, stale bool, fail *cimdFailure) {
	if !c.listed(url) {
		if _, err := oauth.CheckClientIDURL(url); err != nil {
			return store.CIMDClient{}, false, &cimdFailure{reason: err.Error()}
		}
		return store.CIMDClient{}, false, &cimdFailure{reason: CIMDNotListed}
	}
	row, err := st.CIMDClientByURL(ctx, url)
	switch {
	case err == nil && now.Before(row.FreshUntil):
		return row, false, nil
	case err != nil && !errors.Is(err, store.ErrNotFound):
		return store.CIMDClient{}, false, &cimdFailure{reason: CIMDStoreFailed, err: err}
	}
	known := err == nil
	// orStale answers a refetch that failed with f: the stored row, when the
	// failure may pass and the row is recent enough.
	orStale := func(f *cimdFailure, transient bool) (store.CIMDClient, bool, *cimdFailure) {
		if known && transient && now.Before(row.FreshUntil.Add(CIMDStaleFor)) {
			return row, true, nil
		}
		return store.CIMDClient{}, false, f
	}
	if wait, ok := c.perURL.Allow(url, now); !ok {
		return orStale(&cimdFailure{reason: CIMDRateLimited, wait: wait}, true)
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
		return orStale(&cimdFailure{reason: CIMDStoreFailed, err: err}, true)
	}
	return saved, false, nil
}

// cimdAuthorizeClient resolves a URL client_id at /oauth/authorize, CIMD
// on. On failure it writes an error page, never a redirect: the redirect
// URI is not yet trusted.
func cimdAuthorizeClient(w http.ResponseWriter, r *http.Request, logger *slog.Logger, cfg *Config, st *store.DB,
	id string) (store.Client, bool) {
	c, stale, fail := cfg.CIMD.resolve(r.Context(), st, cfg.Now(), id)
	if fail == nil {
		if stale {
			web.AddLog(r.Context(), slog.String("cimd", "stale"))
		}
		return c.Client, true
	}
	web.AddLog(r.Context(), slog.String("code", fail.reason))
	// The host is that of a URL the operator listed (or "" when the URL is
	// not listed): the log and the page name it and the reason, never text
	// of the document.
	host := cfg.CIMD.urls[id]
	if fail.reason != CIMDStoreFailed && fail.reason != CIMDRateLimited {
		logger.WarnContext(r.Context(), "cimd document unusable", "req_id", web.RequestID(r.Context()),
			"host", host, "reason", fail.reason, "status", fail.status)
	}
	// The page says what the administrator must do: a client that uses a
	// metadata document (Claude Code, Codex) never falls back to registering
	// itself, so without the administrator it waits on this page for good.
	unlist := "remove " + id + " from HEYAIRA_CIMD_CLIENTS so that the application registers itself instead."
	reach := "must let the server reach https://" + host + ", or " + unlist
	status := http.StatusBadRequest
	msg := "This server could not use the document that describes the application (reason: " + fail.reason + ")."
	switch fail.reason {
	case CIMDStoreFailed:
		unavailable(w, r, logger, "cimd client store failed", fail.err)
		return store.Client{}, false
	case CIMDRateLimited:
		wait := int(fail.wait.Seconds()) + 1
		w.Header().Set("Retry-After", strconv.Itoa(wait))
		status = http.StatusTooManyRequests
		msg = "This server is fetching application descriptions from " + host + " too often right now (reason: " +
			fail.reason + "). Try again from your application in " + strconv.Itoa(wait) + " seconds. " +
			"If it keeps failing, the server may be unable to reach " + host + ": your administrator " + reach
	case CIMDTimeout, CIMDForbiddenAddr, CIMDFetchFailed:
		status = http.StatusBadGateway
		msg = "This server could not fetch this application's description from " + host + " (reason: " + fail.reason + "). " +
			"Your administrator " + reach + " Starting again will not help until then."
	case CIMDRedirect, CIMDTooLarge, CIMDBadStatus, CIMDBadContentType:
		status = http.StatusBadGateway
		msg = "This server fetched this application's description from " + host + ", but the answer cannot be used (reason: " +
			fail.reason + "). If starting again from your application does not help, your administrator can " + unlist
	case CIMDInvalidJSON, CIMDClientIDMismatch, CIMDSecret, CIMDAuthMethod, CIMDInvalidDocument:
		msg = "The description this application publishes on " + host + " is not one this server accepts (reason: " + fail.reason +
			"). Your administrator can " + unlist
	case CIMDNotListed:
		msg = "This server accepts only the client-ID URLs its administrator listed, and this one is not among them (reason: " +
			fail.reason + "). " +
			"To let this application connect, the administrator adds it to the server's setting, for example " +
			"HEYAIRA_CIMD_CLIENTS=" + id + " (a comma-separated list of exact URLs), and restarts the server."
	default:
		msg += " Start again from your application; if it keeps failing, tell your administrator."
	}
	writeMessage(w, status, "Application not recognised", msg)
	return store.Client{}, false
}

// cimdConsent adds to the consent page what a metadata-document client
// shows: the URL as its id, the URL's host as its identity, and whether
// every redirect URI it lists is on the user's own computer.
func cimdConsent(p *oauth.ConsentPage, cfg *Config, id string, c store.Client) {
	if !cfg.CIMD.listed(id) {
		return
	}
	p.ClientID = id
	p.ClientHost = cfg.CIMD.urls[id]
	remote := func(u string) bool { return !oauth.IsLoopbackRedirect(u) }
	p.AllLoopback = !slices.ContainsFunc(c.RedirectURIs, remote)
}
