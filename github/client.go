package github

import (
	"cmp"
	"context"
	"crypto/rsa"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// DefaultBaseURL is the only GitHub API host used in production.
const DefaultBaseURL = "https://api.github.com"

const (
	// DefaultTimeout bounds one GetFile or ResolveBranch call, including a
	// token mint and the one 401 retry.
	DefaultTimeout = 15 * time.Second
	apiVersion     = "2022-11-28"
	userAgent      = "heyaira-f1"
)

// Config configures a Client. The zero value is valid and yields a client
// whose every call fails with ErrUnconfigured.
type Config struct {
	// BaseURL replaces DefaultBaseURL. Only Go code sets it (tests point it
	// at githubtest); configuration and tool input never reach it. It must
	// be https; a path prefix is kept.
	BaseURL string
	// HTTP is the client to send requests with; nil means a client with a
	// bounded transport and no proxy. The Client works on a copy whose
	// CheckRedirect always refuses to follow redirects.
	HTTP *http.Client
	// AppID is the GitHub App ID or client ID; "" means unconfigured.
	AppID string
	// Key is the App's private key (see ParseAppKey); nil means unconfigured.
	Key *rsa.PrivateKey
	// Timeout bounds each call; 0 means DefaultTimeout.
	Timeout time.Duration
	// Now is the clock for JWTs, token expiry and rate-limit waits; nil means time.Now.
	Now func() time.Time
	// Logger receives request outcomes, never secrets or bodies; nil discards.
	Logger *slog.Logger
	// OnRequest, if set, is called after every HTTP request with the route
	// ("contents", "git_ref" or "access_tokens"), the status (0 when no
	// response arrived) and the duration.
	OnRequest func(route string, status int, d time.Duration)
	// OnMint, if set, is called after every successful token mint.
	OnMint func()
}

// Client reads files and branch heads from GitHub as a GitHub App
// installation. It is safe for concurrent use. A nil *Client answers every
// call with ErrUnconfigured.
type Client struct {
	cfg        Config   // with the defaults filled in
	base       *url.URL // nil when the base URL is unusable
	hc         *http.Client
	tokens     tokenCache
	rateLimits rateLimits
}

// NewClient returns a Client for cfg. It never fails: a missing App ID or
// key, or an unusable base URL, makes every call return ErrUnconfigured, so
// the rest of the server keeps working without GitHub.
func NewClient(cfg Config) *Client {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	c := &Client{
		cfg:        cfg,
		tokens:     tokenCache{tokens: map[tokenKey]cachedToken{}, inflight: map[tokenKey]*mintCall{}},
		rateLimits: rateLimits{held: map[int64]*backoff{}},
	}

	if u, err := url.Parse(strings.TrimSuffix(cmp.Or(cfg.BaseURL, DefaultBaseURL), "/")); err == nil &&
		u.Scheme == "https" && u.Host != "" && u.User == nil &&
		u.RawQuery == "" && u.Fragment == "" && u.RawPath == "" {
		c.base = u
	} else {
		cfg.Logger.Error("github: base URL refused; provider calls will fail as unconfigured")
	}

	hc := http.Client{Transport: defaultTransport()}
	if cfg.HTTP != nil {
		hc = *cfg.HTTP // a copy: the caller's client is not modified
	}
	// No redirect is followed: the 3xx comes back as ErrRedirectRejected.
	// Following it could carry the request (and, with a token-injecting
	// transport, the token) to another host.
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	c.hc = &hc
	return c
}

// defaultTransport is a transport with bounded waits and sizes. It has no
// proxy because the environment is read only by internal/app; it does not
// ask for compression, so body limits count the bytes GitHub sent; and it
// speaks HTTP/1.1 only, whose framing and (absent) retry behaviour are the
// ones the tests exercise.
func defaultTransport() *http.Transport {
	return &http.Transport{
		Proxy:                  nil,
		DialContext:            (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSClientConfig:        &tls.Config{MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout:    10 * time.Second,
		ForceAttemptHTTP2:      false,
		MaxIdleConns:           64,
		MaxIdleConnsPerHost:    64,
		IdleConnTimeout:        90 * time.Second,
		ExpectContinueTimeout:  time.Second,
		MaxResponseHeaderBytes: 64 << 10,
		DisableCompression:     true,
	}
}

// configured checks the App credentials and the binding, without I/O.
func (c *Client) configured(b Binding) error {
	switch {
	case c == nil:
		return fmt.Errorf("%w: no client", ErrUnconfigured)
	case c.base == nil:
		return fmt.Errorf("%w: unusable base URL", ErrUnconfigured)
	case c.cfg.AppID == "":
		return ErrNoAppID
	case c.cfg.Key == nil:
		return ErrNoAppKey
	case b.InstallationID <= 0:
		return ErrNoInstallation
	case b.RepositoryID < 0:
		return fmt.Errorf("%w: negative repository ID", ErrInvalidName)
	}
	return nil
}

// send performs one request and reports it to the metrics hook. The
// Authorization value is attached here, and only when the URL's origin is
// the configured base's (in production https://api.github.com), because
// every URL is built from c.base and any other origin means a bug.
func (c *Client) send(ctx context.Context, route string, req *http.Request, auth string) (*http.Response, error) {
	if req.URL.Scheme != c.base.Scheme || req.URL.Host != c.base.Host {
		return nil, errors.New("request URL is not on the GitHub API origin")
	}
	req.Header.Set("Authorization", "Bearer "+auth)
	req.Header.Set("X-GitHub-Api-Version", apiVersion)
	req.Header.Set("User-Agent", userAgent)
	start := time.Now()
	resp, err := c.hc.Do(req)
	d := time.Since(start)
	status, id := 0, ""
	if err == nil {
		status, id = resp.StatusCode, resp.Header.Get("X-GitHub-Request-Id")
	}
	if c.cfg.OnRequest != nil {
		c.cfg.OnRequest(route, status, d)
	}
	attrs := []any{"route", route, "status", status, "duration", d}
	if id != "" {
		attrs = append(attrs, "github_request_id", id[:min(len(id), 64)])
	}
	c.cfg.Logger.DebugContext(ctx, "github request", attrs...)
	return resp, err
}
