package github_test

// Provider rows of the attack matrix (docs/security-tests.md §2.4–2.5) not
// covered by
// the fault and contents tables: the followed-symlink shape no check can
// see (IN-04c, the residual risk), a gzip bomb (PF-03d), a dripping body
// (PF-05a), an untrusted certificate (PF-10) and pathological JSON
// (PF-11).

import (
	"bytes"
	"compress/gzip"
	"crypto/tls"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"heyaira/github"
	"heyaira/github/githubtest"
	"heyaira/internal/soak"
)

// Row IN-04(c), pinned as the residual risk: if GitHub answered a followed
// in-repo symlink with type "file", the requested path and the target's own
// blob SHA, nothing in the response distinguishes it from a regular file,
// and it is accepted. The shapes seen so far (the link's blob SHA, or the
// target's path) are refused (TestGetFileRefused). Closing this would take
// a tree lookup (mode 120000) per read, against docs/design.md §14's single
// request per fragment; docs/threat-model.md records the decision.
func TestIN04cFollowedSymlinkWithTargetSHAIsUndetectable(t *testing.T) {
	t.Parallel()
	srv, c, b := setup(t)
	target := []byte("contents of secret/target.md\n")
	srv.AddObject("octo", "docs", commit, "docs/link.md", srv.FileObject("octo", "docs", commit, "docs/link.md", target))
	f, err := c.GetFile(t.Context(), b, "docs/link.md", commit)
	if err != nil || !bytes.Equal(f.Content, target) {
		t.Fatalf("the residual shape: %v; if this is now refused, update docs/threat-model.md", err)
	}
}

// Row PF-03(d): a gzip bomb. The client never asks for compression and
// never decompresses, so a Content-Encoding: gzip body is just bytes that
// are not a contents object: provider_unavailable, having read no more
// than the compressed size.
func TestPF03GzipBombIsNotExpanded(t *testing.T) {
	t.Parallel()
	var bomb bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&bomb, gzip.BestCompression)
	chunk := make([]byte, 1<<20)
	for range 16 { // 16 MiB of zeros in about 16 KB: the ratio, not the size, is the point
		zw.Write(chunk)
	}
	zw.Close()
	srv, c, b := setup(t)
	srv.AddFile("octo", "docs", commit, "f.md", []byte("x"))
	var sawAcceptEncoding string
	srv.Inject(githubtest.RouteContents, func(w http.ResponseWriter, r *http.Request) {
		sawAcceptEncoding = r.Header.Get("Accept-Encoding")
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(bomb.Len()))
		w.Write(bomb.Bytes())
	})
	_, err := c.GetFile(t.Context(), b, "f.md", commit)
	wantCode(t, err, "provider_unavailable")
	if sawAcceptEncoding != "" {
		t.Errorf("the client sent Accept-Encoding: %q", sawAcceptEncoding)
	}
	if n := srv.BytesRead(); n > int64(bomb.Len())+200<<10 {
		t.Errorf("the client read %d bytes for a %d-byte bomb", n, bomb.Len())
	}
}

// Row PF-05(a): a body that drips one byte every 100 ms ends at the
// deadline with provider_unavailable, and nothing partial comes back.
func TestPF05DrippingBody(t *testing.T) {
	t.Parallel()
	srv, c, b := setup(t, withTimeout(time.Second))
	srv.AddFile("octo", "docs", commit, "f.md", []byte("x"))
	// Mint the token first: the 1 s deadline is then the dripping read's
	// alone (on a loaded machine a mint could take most of it).
	if _, err := c.GetFile(t.Context(), b, "f.md", commit); err != nil {
		t.Fatalf("warm-up read: %v", err)
	}
	body := `{"type":"file","encoding":"base64","size":1,"name":"f.md","path":"f.md","content":"eA==","sha":"` + githubtest.BlobSHA([]byte("x")) + `"}`
	srv.Inject(githubtest.RouteContents, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(200)
		rc := http.NewResponseController(w)
		for i := range len(body) {
			if _, err := w.Write([]byte{body[i]}); err != nil {
				return
			}
			rc.Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	})
	start := time.Now()
	f, err := c.GetFile(t.Context(), b, "f.md", commit)
	d := time.Since(start)
	wantCode(t, err, "provider_unavailable")
	// The whole drip would take len(body) × 100 ms (16 s): ending well
	// before it is the deadline's doing; how close to 1 s is timing.
	if f != nil || d < 900*time.Millisecond || d >= time.Duration(len(body))*100*time.Millisecond/2 {
		t.Errorf("dripping body: file %v after %v, want nothing at the 1 s deadline", f, d)
	}
	soak.Gate(t, d <= 2*time.Second, "dripping body: ended after %v, want about the 1 s deadline", d)
	wantCount(t, srv, githubtest.RouteContents, 2)
}

// Row PF-10: a server whose certificate no trusted CA signed is refused
// (provider_unavailable) and no request is sent to it.
func TestPF10UntrustedCertificate(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t)
	srv.AddFile("octo", "docs", commit, "f.md", []byte("x"))
	// The system roots, not the fake's CA: what production uses.
	c := github.NewClient(srv.Config(func(cfg *github.Config) {
		cfg.HTTP = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{MinVersion: tls.VersionTLS12}}}
	}))
	_, err := c.GetFile(t.Context(), srv.Binding("octo", "docs"), "f.md", commit)
	wantCode(t, err, "provider_unavailable")
	if n := srv.Count(githubtest.RouteMint) + srv.Count(githubtest.RouteContents); n != 0 {
		t.Errorf("%d requests reached a server with an untrusted certificate", n)
	}
}

// Row PF-11: pathological JSON — 100,000-deep arrays and objects, a huge
// number, null, a size that is a string — is provider_unavailable, quickly,
// without a panic; 1.2 MB of escapes in the path parse, and the path
// check refuses them (provider_inconsistent).
// Row AS-02 (docs/security-tests.md).
func TestPF11PathologicalJSON(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct{ body, code string }{
		"deep array":      {strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000), "provider_unavailable"},
		"deep in content": {`{"type":"file","content":` + strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000) + `}`, "provider_unavailable"},
		"deep object":     {strings.Repeat(`{"a":`, 100_000) + "1" + strings.Repeat("}", 100_000), "provider_unavailable"},
		"huge number":     {`{"type":"file","size":` + strings.Repeat("9", 100_000) + `}`, "provider_unavailable"},
		"null":            {`null`, "provider_unavailable"},
		"size as string":  {`{"type":"file","encoding":"base64","size":"abc","path":"f.md","content":""}`, "provider_unavailable"},
		// Valid JSON, but the path (200,000 escaped NULs) is not the one asked for.
		"escapes in path": {`{"type":"file","encoding":"base64","size":0,"content":"","sha":"` + githubtest.BlobSHA(nil) +
			`","path":"` + strings.Repeat(`\u0000`, 200_000) + `"}`, "provider_inconsistent"},
	} {
		body := tc.body
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv, c, b := setup(t)
			srv.AddFile("octo", "docs", commit, "f.md", []byte("x"))
			srv.Inject(githubtest.RouteContents, githubtest.Status(200, body))
			start := time.Now()
			f, err := c.GetFile(t.Context(), b, "f.md", commit)
			wantCode(t, err, tc.code)
			d := time.Since(start)
			if f != nil {
				t.Errorf("file %v after %v", f, d)
			}
			// Quickly: a quadratic parse of these bodies would not end
			// within the test's timeout; the 3 s figure is timing.
			soak.Gate(t, d <= 3*time.Second, "pathological JSON: answered after %v, want ≤ 3 s", d)
		})
	}
}

// FuzzParseAppKey feeds arbitrary bytes to the App key parser (the PEM of
// docs/design.md §3; a protected file, but its bytes are still parsed
// strictly). It never panics; an error comes with no key and never quotes
// the key material (only, at most, a PEM type line); a key it accepts is a
// valid RSA key of 2048 to 8192 bits.
// Row PF-09 (docs/security-tests.md).
func FuzzParseAppKey(f *testing.F) {
	f.Add(githubtest.KeyPEM())
	f.Add([]byte("-----BEGIN RSA PRIVATE KEY-----\n\n-----END RSA PRIVATE KEY-----\n"))
	f.Add([]byte("-----BEGIN PRIVATE KEY-----\nMIIBVAIBADANBgkqhkiG9w0BAQEFAASCAT4wggE6AgEAAkEA\n-----END PRIVATE KEY-----\n"))
	f.Add([]byte("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n"))
	f.Add([]byte("not a key"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		key, err := github.ParseAppKey(b)
		if err != nil {
			if key != nil {
				t.Fatal("a key with an error")
			}
			msg := err.Error()
			firstLine, body, _ := bytes.Cut(b, []byte("\n"))
			_ = firstLine
			for i := 0; i+16 <= len(body); i++ {
				if w := body[i : i+16]; bytes.Contains([]byte(msg), w) && len(bytes.TrimSpace(w)) == 16 {
					t.Fatalf("the error %q quotes the input %q", msg, w)
				}
			}
			return
		}
		if n := key.N.BitLen(); n < 2048 || n > 8192 || key.Validate() != nil {
			t.Fatalf("accepted a %d-bit key that does not validate", n)
		}
	})
}
