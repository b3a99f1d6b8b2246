package server_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	"heyaira/server/authserver"
)

// The documents' real hosts, served by one local TLS stand-in. The
// production fetcher reaches it through a test dialer (passed to authserver.NewCIMDWithTimeout)
// that sends every connection to the stand-in and records the address
// asked for; the address check that dialer skips is tested on its own
// (cimd_fetch_test.go).

// cimdHosts are the hosts the stand-in holds a certificate for. No test
// lists a URL on the last, for the refusal of a URL outside the list.
var cimdHosts = []string{"claude.ai", "vscode.dev", "chatgpt.com", "docs.example", "outside.example"}

// Snapshot documents: URL → file under testdata/cimd.
var cimdSnapshots = map[string]string{
	"https://claude.ai/oauth/claude-code-client-metadata": "claude-code.json",
	"https://claude.ai/oauth/mcp-oauth-client-metadata":   "claude-ai.json",
	"https://vscode.dev/oauth/client-metadata.json":       "vscode.json",
	"https://chatgpt.com/oauth/codex/client.json":         "codex.json",
}

// cimdStandIn is the TLS stand-in with its routes and what it saw.
type cimdStandIn struct {
	srv   *httptest.Server
	roots *x509.CertPool
	mu    sync.Mutex
	route map[string]http.HandlerFunc // "host/path" → handler
	hits  map[string]int
	dials []string // addresses the fetcher asked the dialer for
}

func newCIMDStandIn(t testing.TB) *cimdStandIn {
	t.Helper()
	s := &cimdStandIn{route: map[string]http.HandlerFunc{}, hits: map[string]int{}}
	cert, roots := cimdCertificate(t, cimdHosts)
	s.roots = roots
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	s.srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	s.srv.StartTLS()
	t.Cleanup(s.srv.Close)
	for url, file := range cimdSnapshots {
		body, err := os.ReadFile("testdata/cimd/" + file)
		if err != nil {
			t.Fatal(err)
		}
		s.serveJSON(url, body)
	}
	return s
}

func (s *cimdStandIn) serve(w http.ResponseWriter, r *http.Request) {
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

// handle routes a document URL ("https://host/path") to h.
func (s *cimdStandIn) handle(url string, h http.HandlerFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.route[url[len("https://"):]] = h
}

// serveJSON serves body as application/json at url.
func (s *cimdStandIn) serveJSON(url string, body []byte, headers ...string) {
	s.handle(url, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		w.Write(body)
	})
}

// fetches is how many requests reached url.
func (s *cimdStandIn) fetches(url string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[url[len("https://"):]]
}

// totalFetches is how many requests reached the stand-in.
func (s *cimdStandIn) totalFetches() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, v := range s.hits {
		n += v
	}
	return n
}

func (s *cimdStandIn) dialed() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.dials...)
}

// dial is the test dialer: it records the address and connects to the
// stand-in whatever the name.
func (s *cimdStandIn) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	s.mu.Lock()
	s.dials = append(s.dials, addr)
	s.mu.Unlock()
	var d net.Dialer
	return d.DialContext(ctx, network, s.srv.Listener.Addr().String())
}

// resolver returns a CIMD for the listed client-ID URLs that fetches
// through the stand-in.
func (s *cimdStandIn) resolver(t testing.TB, timeout time.Duration, urls ...string) *authserver.CIMD {
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
