package systemtest

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"
)

// spkiPin is the base64 SHA-256 of a certificate's public key, the form
// Chromium's --ignore-certificate-errors-spki-list takes: the browser then
// trusts that one key (the test's nginx), and no other certificate error.
func spkiPin(t *testing.T, certFile string) string {
	t.Helper()
	raw, err := os.ReadFile(certFile)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(raw)
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(cert.RawSubjectPublicKeyInfo)
	return base64.StdEncoding.EncodeToString(sum[:])
}

// Row TP-09: the browser sign-in and consent through nginx over https, in
// Debian's headless Chromium (scripts/js/browser-flow.mjs): the __Host-
// cookies must survive the proxy, the redirects must stay on the public
// https URL, and the code the browser brings back must redeem through nginx
// and read a document.
func TestTP09BrowserThroughNginx(t *testing.T) {
	browser := chromiumPath(t)
	jsDir(t)
	tp := newTopology(t, nil)
	c := tp.client("127.0.0.5")
	redirectURI, codes := callbackServer(t)
	reg, _ := json.Marshal(map[string]any{"client_name": "Chromium through nginx", "redirect_uris": []string{redirectURI}})
	status, body := fullBody(t, c, "POST", "/oauth/register", string(reg), "Content-Type", "application/json")
	var client map[string]any
	if json.Unmarshal([]byte(body), &client); status != http.StatusCreated {
		t.Fatalf("register: %d %s", status, body)
	}
	clientID, _ := client["client_id"].(string)
	secret := make([]byte, 32)
	rand.Read(secret)
	verifier := base64.RawURLEncoding.EncodeToString(secret)
	sum := sha256.Sum256([]byte(verifier))
	state := rand.Text()
	q := url.Values{"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {redirectURI},
		"code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"},
		"state": {state}, "resource": {tp.public + "/mcp"},
		"scope": {"memory:read memory:write tasks:read tasks:write documents:read workflows:read workflows:write"}}
	link := str(t, adminRun(t, tp.env, "signin-link", "--principal-id", tp.person), "url")
	out := runNode(t, "browser-flow.mjs", map[string]any{
		"authorizeURL": tp.public + "/oauth/authorize?" + q.Encode(), "signinURL": link,
		"callbackURL": redirectURI, "artifactsDir": t.TempDir(), "userDataDir": t.TempDir(), "chromium": browser,
		"extraArgs": []string{"--ignore-certificate-errors-spki-list=" + spkiPin(t, tp.certFile)},
	}, 3*time.Minute)
	if got := at(out, "consent", "path"); got != "/oauth/authorize" {
		t.Errorf("consent page path through nginx: %v", got)
	}
	var cb url.Values
	select {
	case cb = <-codes:
	case <-time.After(5 * time.Second):
		t.Fatal("the callback server received nothing")
	}
	if cb.Get("state") != state || cb.Get("iss") != tp.public || len(cb["code"]) != 1 {
		t.Fatalf("callback: state ok %v, iss %q, %d codes", cb.Get("state") == state, cb.Get("iss"), len(cb["code"]))
	}
	form := url.Values{"grant_type": {"authorization_code"}, "code": {cb.Get("code")}, "code_verifier": {verifier},
		"redirect_uri": {redirectURI}, "client_id": {clientID}, "resource": {tp.public + "/mcp"}}
	status, body = fullBody(t, c, "POST", "/oauth/token", form.Encode(), "Content-Type", "application/x-www-form-urlencoded")
	var tok map[string]any
	if json.Unmarshal([]byte(body), &tok); status != http.StatusOK || tok["access_token"] == nil {
		t.Fatalf("code exchange through nginx: %d %s", status, body)
	}
	if !strings.Contains(tok["scope"].(string), "documents:read") {
		t.Errorf("token scope %v lacks documents:read", tok["scope"])
	}
	if o := c.toolCall(tok["access_token"].(string), "git_document_get", map[string]any{"source_id": tp.source}); !o.ok() {
		t.Errorf("document read with the browser flow's token through nginx: %+v", o)
	}
}
