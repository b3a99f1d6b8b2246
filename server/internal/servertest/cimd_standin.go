package servertest

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"embed"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"heyaira/server"
	"heyaira/server/authserver"
)

// The documents' real hosts, served by one local TLS stand-in. The
// production fetcher reaches it through a test dialer (passed to authserver.NewCIMDWithTimeout)
// that sends every connection to the stand-in and records the address
// asked for; the address check that dialer skips is tested on its own
// (authserver's cimd_fetch_test.go).

// cimdHosts are the hosts the stand-in holds a certificate for. No test
// lists a URL on the last, for the refusal of a URL outside the list.
var cimdHosts = []string{"claude.ai", "vscode.dev", "chatgpt.com", "docs.example", "outside.example"}

//go:embed testdata/cimd
var snapshots embed.FS

// Snapshot documents: URL → file under testdata/cimd.
var cimdSnapshots = map[string]string{
	"https://claude.ai/oauth/claude-code-client-metadata": "claude-code.json",
	"https://claude.ai/oauth/mcp-oauth-client-metadata":   "claude-ai.json",
	"https://vscode.dev/oauth/client-metadata.json":       "vscode.json",
	"https://chatgpt.com/oauth/codex/client.json":         "codex.json",
}

// CIMDStandIn is the TLS stand-in with its routes and what it saw.
type CIMDStandIn struct {
	srv   *httptest.Server
	roots *x509.CertPool
	mu    sync.Mutex
	route map[string]http.HandlerFunc // "host/path" → handler
	hits  map[string]int
	dials []string // addresses the fetcher asked the dialer for
}

// NewCIMDStandIn starts the stand-in, serving the snapshot documents.
func NewCIMDStandIn(t testing.TB) *CIMDStandIn {
	t.Helper()
	s := &CIMDStandIn{route: map[string]http.HandlerFunc{}, hits: map[string]int{}}
	cert, roots := cimdCertificate(t, cimdHosts)
	s.roots = roots
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	s.srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	s.srv.StartTLS()
	t.Cleanup(s.srv.Close)
	for url, file := range cimdSnapshots {
		body, err := snapshots.ReadFile("testdata/cimd/" + file)
		if err != nil {
			t.Fatal(err)
		}
		s.ServeJSON(url, body)
	}
	return s
}

func (s *CIMDStandIn) serve(w http.ResponseWriter, r *http.Request) {
	key := r.Host + r.URL.RequestURI()
	s.mu.Lock()
	s.hits[key]++
	h := s.route[key]
	s.mu.Unlock()
	if h == nil {
		http.NotFound(w, r)
		return
	}
	h(w, r)
}

// Handle routes a document URL ("https://host/path") to h.
func (s *CIMDStandIn) Handle(url string, h http.HandlerFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.route[url[len("https://"):]] = h
}

// ServeJSON serves body as application/json at url.
func (s *CIMDStandIn) ServeJSON(url string, body []byte, headers ...string) {
	s.Handle(url, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		w.Write(body)
	})
}

// Fetches is how many requests reached url.
func (s *CIMDStandIn) Fetches(url string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[url[len("https://"):]]
}

// TotalFetches is how many requests reached the stand-in.
func (s *CIMDStandIn) TotalFetches() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, v := range s.hits {
		n += v
	}
	return n
}

// Dialed lists the addresses the fetcher asked the dialer for.
func (s *CIMDStandIn) Dialed() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.dials...)
}

// dial is the test dialer: it records the address and connects to the
// stand-in whatever the name.
func (s *CIMDStandIn) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	s.mu.Lock()
	s.dials = append(s.dials, addr)
	s.mu.Unlock()
	var d net.Dialer
	return d.DialContext(ctx, network, s.srv.Listener.Addr().String())
}

// Resolver returns a CIMD for the listed client-ID URLs that fetches
// through the stand-in.
func (s *CIMDStandIn) Resolver(t testing.TB, timeout time.Duration, urls ...string) *authserver.CIMD {
	t.Helper()
	c, err := authserver.NewCIMDWithTimeout(urls, s.dial, s.roots, timeout)
	if err != nil || c == nil {
		t.Fatalf("newCIMD(%v): %v, %v", urls, c, err)
	}
	return c
}

// cimdCertificate is a throwaway self-signed certificate for hosts, and a
// pool that trusts only it.
func cimdCertificate(t testing.TB, hosts []string) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "cimd stand-in"}, DNSNames: hosts,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, IsCA: true, BasicConstraintsValid: true,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool
}

// NewCIMDEnv is a test server with CIMD on for the listed client-ID URLs,
// fetching from a stand-in that serves the snapshot documents.
func NewCIMDEnv(t *testing.T, urls ...string) (*Env, *CIMDStandIn) {
	t.Helper()
	s := NewCIMDStandIn(t)
	cimd := s.Resolver(t, authserver.CIMDFetchTimeout, urls...)
	return New(t, func(c *server.Config) { c.CIMD = cimd }), s
}

// CIMDClient is a client named by its document URL, using redirect.
func CIMDClient(url, redirect string) Client {
	return Client{ID: url, Redirect: redirect, Verifier: OAuthB64(bytes.Repeat([]byte{7}, 40))}
}

// CIMDAuthorizeFrom GETs /oauth/authorize for c as the client at xff (the
// test environment must trust loopback as a proxy: TrustLoopback), or from
// the test client's own address when xff is "".
func CIMDAuthorizeFrom(t *testing.T, e *Env, c Client, scope, xff string) Page {
	t.Helper()
	req, _ := http.NewRequest("GET", e.Srv.URL+"/oauth/authorize?"+c.AuthorizeQuery(scope).Encode(), nil)
	if xff != "" {
		req.Header.Set("X-Forwarded-For", xff)
	}
	return e.Browser(t).Do(req)
}
