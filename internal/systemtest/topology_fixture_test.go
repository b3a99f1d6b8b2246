package systemtest

// The production topology in a test: a throwaway CA, Debian's nginx
// terminating TLS with deploy/nginx-heyaira.conf, and two replicas of the
// real program (run → serve) on one PostgreSQL, behind it round-robin.

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"heyaira/github/githubtest"
	"heyaira/internal/app"
	"heyaira/oauth"
	"heyaira/store/storetest"
)

// nginxPath is Debian's nginx: the one scripts/test unpacks under .data/nginx
// (HEYAIRA_TEST_NGINX, or found there by a plain go test), else an installed
// one; without any, the test skips, and fails under scripts/test.
func nginxPath(t *testing.T) string {
	t.Helper()
	for _, p := range []string{os.Getenv("HEYAIRA_TEST_NGINX"), ".data/nginx/usr/sbin/nginx", "/usr/sbin/nginx"} {
		if _, err := os.Stat(p); p != "" && err == nil {
			return p
		}
	}
	storetest.Missing(t, "no nginx: run scripts/test, which unpacks Debian's nginx under .data/nginx")
	return ""
}

// throwawayCA makes a CA and a certificate for 127.0.0.1 signed by it, and
// returns the CA pool and the PEM file paths (CA, certificate, key).
func throwawayCA(t *testing.T, dir string) (pool *x509.CertPool, caFile, certFile, keyFile string) {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "heyaira test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, _ := x509.MarshalPKCS8PrivateKey(key)
	caFile = writePEM(t, dir, "ca.pem", "CERTIFICATE", caDER)
	certFile = writePEM(t, dir, "cert.pem", "CERTIFICATE", der)
	keyFile = writePEM(t, dir, "key.pem", "PRIVATE KEY", keyDER)
	pool = x509.NewCertPool()
	pool.AddCert(ca)
	return pool, caFile, certFile, keyFile
}

func writePEM(t *testing.T, dir, name, typ string, der []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// freeAddr returns a loopback address nothing listens on (yet), for a
// process that binds it later (nginx, the demo) or for a test that needs a
// refused connection. Its port is below the kernel's ephemeral range
// (net.ipv4.ip_local_port_range, 32768–60999 by default): a port taken from
// port 0 is free only until it is closed, and in between any test's
// listener on port 0 or outgoing connection may take it (nginx then failed
// to bind while the readiness dial reached the other process, "server gave
// HTTP response to HTTPS client"). The kernel never hands out a port below
// the range by itself, so only another caller of freeAddr could take it.
func freeAddr(t *testing.T) string {
	t.Helper()
	for range 200 {
		addr := "127.0.0.1:" + strconv.Itoa(20000+mrand.IntN(12000))
		if ln, err := net.Listen("tcp", addr); err == nil {
			ln.Close()
			return addr
		}
	}
	t.Fatal("no free loopback port below the ephemeral range")
	return ""
}

// startNginx runs nginx in the foreground with the repository's site config,
// listening on listen and proxying to replicas, and waits until it accepts
// connections. It is stopped (SIGQUIT, graceful) at cleanup.
func startNginx(t *testing.T, dir, listen, cert, key string, replicas []string) {
	t.Helper()
	site, err := os.ReadFile("deploy/nginx-heyaira.conf")
	if err != nil {
		t.Fatal(err)
	}
	// The __REPLICA__ line, with its max_fails and fail_timeout, once per replica.
	const replicaLine = "    server __REPLICA__ max_fails=1 fail_timeout=2s;\n"
	var ups strings.Builder
	for _, r := range replicas {
		ups.WriteString(strings.Replace(replicaLine, "__REPLICA__", r, 1))
	}
	conf := mustReplace(t, "deploy/nginx-heyaira.conf", string(site), replicaLine, ups.String(),
		"__LISTEN__", listen, "__CERT__", cert, "__KEY__", key)
	if strings.Contains(conf, "__") {
		t.Fatal("deploy/nginx-heyaira.conf has a placeholder the test does not fill")
	}
	// deploy/nginx.conf, the complete configuration, with the test's own
	// paths, a free port for its http redirect, and nginx in the foreground.
	outer, err := os.ReadFile("deploy/nginx.conf")
	if err != nil {
		t.Fatal(err)
	}
	user := "" // the workers must reach the test's private directory
	if os.Getuid() == 0 {
		user = "user root;"
	}
	main := mustReplace(t, "deploy/nginx.conf", string(outer),
		"user www-data;", user+"\ndaemon off;",
		"worker_processes auto;", "worker_processes 1;",
		"pid /run/nginx.pid;", "pid "+dir+"/nginx.pid;",
		"error_log /var/log/nginx/error.log warn;", "error_log "+dir+"/error.log warn;",
		"worker_connections 4096;", "worker_connections 512;",
		"access_log /var/log/nginx/heyaira.access.log heyaira;", "access_log "+dir+"/access.log heyaira;\n"+
			"    client_body_temp_path "+dir+"/body;\n    proxy_temp_path "+dir+"/proxy;\n"+
			"    fastcgi_temp_path "+dir+"/fastcgi;\n    uwsgi_temp_path "+dir+"/uwsgi;\n    scgi_temp_path "+dir+"/scgi;",
		"listen 80;", "listen "+freeAddr(t)+";",
		"listen [::]:80;", "",
		"include /etc/nginx/heyaira.conf;", "include "+dir+"/site.conf;")
	for name, body := range map[string]string{"site.conf": conf, "nginx.conf": main} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(nginxPath(t), "-p", dir, "-e", dir+"/error.log", "-c", dir+"/nginx.conf")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGQUIT)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	})
	// Ready when a TLS handshake succeeds: a plain dial could reach another
	// process on the port. Only readiness is checked here; the clients
	// verify the certificate.
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := tls.DialWithDialer(&net.Dialer{Timeout: time.Second}, "tcp", listen,
			&tls.Config{InsecureSkipVerify: true})
		if err == nil {
			c.Close()
			return
		}
		select {
		case err := <-exited:
			log, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			t.Fatalf("nginx exited: %v\n%s", err, log)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("nginx not listening on %s after 10s", listen)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// mustReplace replaces each old string of pairs in s by its new one; each
// must be there, so that the shipped file and the test cannot drift apart.
func mustReplace(t *testing.T, name, s string, pairs ...string) string {
	t.Helper()
	for i := 0; i < len(pairs); i += 2 {
		if !strings.Contains(s, pairs[i]) {
			t.Fatalf("%s no longer contains %q, which the test replaces", name, pairs[i])
		}
		s = strings.ReplaceAll(s, pairs[i], pairs[i+1])
	}
	return s
}

// topology is nginx on https in front of two replicas of one deployment.
type topology struct {
	*liveServer
	public   string // https://127.0.0.1:port, HEYAIRA_PUBLIC_URL
	replicas []string
	stops    []func() error
	ca       *x509.CertPool
	caFile   string
	certFile string    // nginx's certificate
	hooks    app.Hooks // the fake GitHub
	nginxLog string    // nginx's error log
}

// newTopology sets up the tenant with the live-server fixture, then runs
// two replicas with HEYAIRA_PUBLIC_URL on nginx's https address, nginx as
// the only trusted proxy, and HEYAIRA_REPLICAS=2. The fixture's tokens are
// re-issued for the https resource.
func newTopology(t *testing.T, extraEnv map[string]string) *topology {
	t.Helper()
	dir := t.TempDir()
	gh := githubtest.New(t)
	s := newLiveServer(t, storetest.NewURL(t), gh, app.Hooks{}, 4096)
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	tp := &topology{liveServer: s}
	var key string
	tp.ca, tp.caFile, tp.certFile, key = throwawayCA(t, dir)
	listen := freeAddr(t)
	tp.public = "https://" + listen
	s.env["HEYAIRA_PUBLIC_URL"] = tp.public
	s.env["HEYAIRA_TRUSTED_PROXIES"] = "127.0.0.1/32"
	s.env["HEYAIRA_REPLICAS"] = "2"
	for k, v := range extraEnv {
		s.env[k] = v
	}
	tp.hooks = fakeGitHub(gh)
	for range 2 {
		base, stop := startServe(t, s.env, tp.hooks, s.logs)
		tp.replicas = append(tp.replicas, base)
		tp.stops = append(tp.stops, stop)
	}
	tp.nginxLog = filepath.Join(dir, "error.log")
	startNginx(t, dir, listen, tp.certFile, key, []string{tp.replicas[0][len("http://"):], tp.replicas[1][len("http://"):]})
	s.base = tp.public
	s.access = newAccessToken(t, s.dbURL, s.person, s.project, tp.public+"/mcp")
	s.clientID, s.refresh = insertRefreshToken(t, s.dbURL, s.person, s.project, tp.public+"/mcp")
	return tp
}

// client is an HTTP client that trusts the CA and connects from local
// address ip (any 127.0.0.0/8 address), so nginx sees a distinct client,
// closed at the end of the test.
func (tp *topology) client(ip string) *loadClient {
	c := newLoadClient(tp.public)
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	c.hc.Transport = &http.Transport{DialContext: d.DialContext, DisableCompression: true,
		TLSClientConfig: &tls.Config{RootCAs: tp.ca}, MaxIdleConnsPerHost: 16}
	// Its idle connections to nginx end with the test, before nginx stops
	// (cleanups run last-in first-out), so none outlives it (LD-05).
	tp.t.Cleanup(c.close)
	return c
}

// restart stops replica i (SIGTERM: drain, then exit) and starts it again
// on the same address, as a rolling restart does.
func (tp *topology) restart(t *testing.T, i int) error {
	if err := tp.stops[i](); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", tp.replicas[i][len("http://"):])
	if err != nil {
		return err
	}
	hooks := tp.hooks
	hooks.Listener = ln
	_, tp.stops[i] = startServe(t, tp.env, hooks, tp.logs)
	return nil
}

// direct is a client of replica i alone, bypassing nginx.
func (tp *topology) direct(i int) *loadClient { return newLoadClient(tp.replicas[i]) }

// newAccessToken stores a fresh access token with every scope for resource.
func newAccessToken(t *testing.T, dbURL, principal, project, resource string) string {
	t.Helper()
	tok := newToken(t, oauth.PrefixAccess, time.Hour)
	storetest.InsertAccessToken(t, dbURL, principal, project, resource, tok,
		[]string{"memory:read", "memory:write", "tasks:read", "tasks:write", "documents:read"})
	return tok
}
