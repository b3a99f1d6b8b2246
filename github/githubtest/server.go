// Package githubtest is a fake of the GitHub REST API for tests of package
// github and of its callers. It speaks the parts of the real API the client
// uses (contents with the object media type, git/ref, installation-token
// minting), checks what a careful GitHub would check, and injects faults on
// demand.
//
// The fake is an httptest TLS server mounted under the base path "/api-v3",
// so a client that builds absolute URLs instead of using its base URL fails.
// What it guarantees:
//
//   - every App JWT is verified (RS256 against the App's public key, integer
//     iat and exp within GitHub's bounds, iss equal to the App ID) and every
//     mint must name a non-empty repository list and exactly
//     {"contents":"read"};
//   - contents and git/ref requests need a token the fake minted, unexpired
//     on the fake's clock, not revoked, and scoped to the repository (401 or
//     404 otherwise, as GitHub answers);
//   - contents answers are pre-encoded at AddFile time (base64 in 60-character
//     lines, git blob SHA-1, null content for empty files), so serving a 1 MiB
//     file costs one write;
//   - every request is counted per route and logged with whether it carried an
//     Authorization header and the SHA-256 of its value, never the value.
//
// The fake's clock (Clock) is frozen unless a test advances it; the
// github.Config from Config uses the same clock.
package githubtest

import (
	"context"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"heyaira/github"
)

// BasePath is the path prefix the fake's API lives under.
const BasePath = "/api-v3"

// Route names a group of API endpoints, for counters, logs and faults.
type Route string

// The routes the fake serves.
const (
	RouteContents Route = "contents"      // GET /repos/{o}/{r}/contents/{path}
	RouteRef      Route = "git_ref"       // GET /repos/{o}/{r}/git/ref/heads/{branch}
	RouteMint     Route = "access_tokens" // POST /app/installations/{id}/access_tokens
	RouteOther    Route = "other"         // anything else (answered 404)
)

// AuthKind says what an Authorization header carried.
type AuthKind string

// Kinds of Authorization values.
const (
	AuthNone         AuthKind = ""                   // no header
	AuthJWT          AuthKind = "jwt"                // a JWT that verified
	AuthToken        AuthKind = "installation_token" // a token the fake minted
	AuthUnrecognized AuthKind = "unrecognized"       // anything else
)

// Request is one request as the fake received it.
type Request struct {
	Route  Route
	Method string
	// Path is the escaped path after BasePath, exactly as sent.
	Path string
	// Query is the raw query string, exactly as sent.
	Query      string
	Accept     string
	APIVersion string
	UserAgent  string
	// HasAuthorization reports whether an Authorization header was present.
	HasAuthorization bool
	// AuthorizationSHA256 is the hex SHA-256 of the whole header value
	// (e.g. of "Bearer ghs_..."), so tests can check that a given secret
	// never arrived without the fake keeping secrets.
	AuthorizationSHA256 string
	// Auth classifies the header value.
	Auth AuthKind
	// Status is the status the fake answered with (0 for a dropped connection).
	Status int
}

// Option changes the github.Config built by Config and Client.
type Option func(*github.Config)

// Server is a fake GitHub API. Create it with New.
type Server struct {
	srv   *httptest.Server
	clock *Clock
	hc    *http.Client
	stop  context.CancelFunc // at cleanup: ends every request context

	mu       sync.Mutex
	state    // repositories, files, branches; see repo.go
	auth     // tokens and JWTs; see tokens.go
	faults   map[Route][]*faultEntry
	latency  time.Duration
	holds    []*hold // see hold.go
	counts   map[Route]int
	requests []Request

	inflight    atomic.Int64
	maxInflight atomic.Int64
	bytesRead   atomic.Int64
	dialMu      sync.Mutex
	dials       []string
}

// New starts a fake GitHub closed by t.Cleanup.
func New(t testing.TB) *Server {
	t.Helper()
	s := Start()
	t.Cleanup(s.Close)
	return s
}

// Start starts a fake GitHub for a program (the demo, internal/demo) rather
// than a test; Close stops it.
func Start() *Server {
	s := &Server{
		clock:  NewClock(time.Unix(time.Now().Unix(), 0)),
		faults: make(map[Route][]*faultEntry),
		counts: make(map[Route]int),
	}
	s.state.init()
	s.auth.init()
	base, stop := context.WithCancel(context.Background())
	s.stop = stop
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	// Request contexts derive from base, so stalled handlers end at cleanup
	// even if a client is still connected.
	s.srv.Config.BaseContext = func(net.Listener) context.Context { return base }
	s.srv.StartTLS()
	pool := x509.NewCertPool()
	pool.AddCert(s.srv.Certificate())
	s.hc = &http.Client{Transport: &http.Transport{
		Proxy:               nil,
		TLSClientConfig:     &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12},
		DialContext:         s.dial,
		MaxIdleConns:        128,
		MaxIdleConnsPerHost: 128,
		IdleConnTimeout:     30 * time.Second,
		DisableCompression:  true,
	}}
	return s
}

// Close ends every request, then stops the server.
func (s *Server) Close() {
	s.stop()
	s.hc.CloseIdleConnections()
	s.srv.Close()
}

// URL is the base URL to put in github.Config.BaseURL.
func (s *Server) URL() string { return s.srv.URL + BasePath }

// Clock is the fake's clock, shared with the Config it hands out.
func (s *Server) Clock() *Clock { return s.clock }

// HTTPClient is a client that trusts the fake's certificate and counts what
// it dials and reads (see Dials and BytesRead).
func (s *Server) HTTPClient() *http.Client { return s.hc }

// Config returns a github.Config pointed at the fake: its URL, HTTP client,
// App ID and key, and clock, a 10 s timeout, then opts applied in order.
func (s *Server) Config(opts ...Option) github.Config {
	cfg := github.Config{
		BaseURL: s.URL(),
		HTTP:    s.hc,
		AppID:   AppID,
		Key:     Key(),
		Timeout: 10 * time.Second,
		Now:     s.clock.Now,
	}
	for _, o := range opts {
		o(&cfg)
	}
	return cfg
}

// Client returns github.NewClient(s.Config(opts...)).
func (s *Server) Client(opts ...Option) *github.Client {
	return github.NewClient(s.Config(opts...))
}

// SetLatency delays every answer by d (for load tests); 0 turns it off.
func (s *Server) SetLatency(d time.Duration) {
	s.mu.Lock()
	s.latency = d
	s.mu.Unlock()
}

// Count returns how many requests route has received.
func (s *Server) Count(route Route) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts[route]
}

// Requests returns a copy of the request log, oldest first.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// SawAuthorization reports whether any request carried exactly the
// Authorization header value v (e.g. "Bearer "+mcpToken).
func (s *Server) SawAuthorization(v string) bool {
	h := hashHex(v)
	for _, r := range s.Requests() {
		if r.AuthorizationSHA256 == h {
			return true
		}
	}
	return false
}

// MaxInFlight is the highest number of requests the fake served at once.
func (s *Server) MaxInFlight() int { return int(s.maxInflight.Load()) }

// BytesRead is how many bytes HTTPClient's connections have read from the
// network, TLS records included.
func (s *Server) BytesRead() int64 { return s.bytesRead.Load() }

// Dials lists the addresses HTTPClient dialed, in order.
func (s *Server) Dials() []string {
	s.dialMu.Lock()
	defer s.dialMu.Unlock()
	return append([]string(nil), s.dials...)
}

func (s *Server) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	s.dialMu.Lock()
	s.dials = append(s.dials, addr)
	s.dialMu.Unlock()
	c, err := (&net.Dialer{Timeout: 5 * time.Second}).DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: c, n: &s.bytesRead}, nil
}

type countingConn struct {
	net.Conn
	n *atomic.Int64
}

// Read reads from the connection and counts the bytes.
func (c *countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// statusWriter remembers the status written.
type statusWriter struct {
	http.ResponseWriter
	status int
}

// WriteHeader records the first status and passes it on.
func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

// Write records an implicit 200 and passes the bytes on.
func (w *statusWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(p)
}

// Flush flushes the underlying writer.
func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach Hijack.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// serve is the single entry point: route, log, delay, fault or answer.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	n := s.inflight.Add(1)
	defer s.inflight.Add(-1)
	for {
		m := s.maxInflight.Load()
		if n <= m || s.maxInflight.CompareAndSwap(m, n) {
			break
		}
	}
	escaped := strings.TrimPrefix(r.URL.EscapedPath(), BasePath)
	route := routeOf(r.Method, escaped, r.URL.EscapedPath())
	authz := r.Header.Get("Authorization")
	rec := Request{
		Route: route, Method: r.Method, Path: escaped, Query: r.URL.RawQuery,
		Accept: r.Header.Get("Accept"), APIVersion: r.Header.Get("X-GitHub-Api-Version"),
		UserAgent: r.Header.Get("User-Agent"), HasAuthorization: authz != "",
	}
	if authz != "" {
		rec.AuthorizationSHA256 = hashHex(authz)
	}
	sw := &statusWriter{ResponseWriter: w}

	s.mu.Lock()
	if route == RouteMint && authz != "" {
		s.jwts = append(s.jwts, strings.TrimPrefix(authz, "Bearer "))
	}
	s.counts[route]++
	idx := len(s.requests)
	s.requests = append(s.requests, rec)
	latency := s.latency
	fault := s.takeFault(route)
	s.mu.Unlock()

	kind := AuthNone
	defer func() {
		s.mu.Lock()
		s.requests[idx].Status = sw.status
		s.requests[idx].Auth = kind
		s.mu.Unlock()
	}()
	if latency > 0 && !s.wait(r.Context(), latency) {
		return
	}
	if !s.waitHold(r.Context(), escaped) {
		return
	}
	if route != RouteMint || (fault != nil && fault.f != nil) {
		kind = s.classifyAuth(authz) // serveMint verifies the JWT itself
	}
	sw.Header().Set("X-GitHub-Request-Id", "FAKE:"+hashHex(r.RequestURI)[:8])
	switch {
	case fault != nil && fault.before != nil:
		fault.before(r)
	case fault != nil:
		fault.f(sw, r)
		return
	}
	switch route {
	case RouteContents:
		s.serveContents(sw, r, escaped)
	case RouteRef:
		s.serveRef(sw, r, escaped)
	case RouteMint:
		kind = s.serveMint(sw, r, escaped)
	default:
		writeError(sw, http.StatusNotFound, "Not Found")
	}
}

// wait sleeps d unless the request ends first (also at cleanup).
func (s *Server) wait(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func routeOf(method, escaped, full string) Route {
	if !strings.HasPrefix(full, BasePath+"/") {
		return RouteOther
	}
	seg := strings.Split(escaped, "/") // "", "repos", o, r, ...
	switch {
	case method == http.MethodGet && len(seg) >= 6 && seg[1] == "repos" && seg[4] == "contents":
		return RouteContents
	case method == http.MethodGet && len(seg) >= 8 && seg[1] == "repos" && seg[4] == "git" && seg[5] == "ref" && seg[6] == "heads":
		return RouteRef
	case method == http.MethodPost && len(seg) == 5 && seg[1] == "app" && seg[2] == "installations" && seg[4] == "access_tokens":
		return RouteMint
	}
	return RouteOther
}

func hashHex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// Key returns the App's private key, shared by every fake in the process
// (generating an RSA key per test would dominate test time).
func Key() *rsa.PrivateKey { return appKey() }
