package systemtest

import (
	"context"
	"crypto/x509"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"heyaira/github/githubtest"
	"heyaira/internal/logbuf"
	"heyaira/store/storetest"
)

// TestInteropTypeScriptSDKCIMD: the TypeScript SDK client configured with a
// clientMetadataUrl completes the whole flow against the real server with
// its URL listed in HEYAIRA_CIMD_CLIENTS: it uses the URL as client_id (no registration),
// the server fetches the document from a local TLS stand-in for its host
// (through the serve hooks' dialer; the address check is tested in
// server), shows consent, issues tokens, and the SDK refreshes them.
// Row CM-13 (docs/security-tests.md).
func TestInteropTypeScriptSDKCIMD(t *testing.T) {
	t.Parallel()
	const docURL = "https://example.com/heyaira-interop/client.json" // httptest's certificate names example.com
	var fetches atomic.Int32
	standIn := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Host+r.URL.Path != "example.com/heyaira-interop/client.json" {
			http.NotFound(w, r)
			return
		}
		fetches.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"client_id":"` + docURL + `","client_name":"HeyAira interop (CIMD)",` +
			`"redirect_uris":["http://127.0.0.1/callback"],"grant_types":["authorization_code","refresh_token"],` +
			`"token_endpoint_auth_method":"none"}`))
	}))
	t.Cleanup(standIn.Close)
	roots := x509.NewCertPool()
	roots.AddCert(standIn.Certificate())
	dial := func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, standIn.Listener.Addr().String())
	}

	gh := githubtest.New(t)
	env := baseEnv(t, storetest.NewMigratedURL(t))
	env["HEYAIRA_CIMD_CLIENTS"] = docURL
	f := &interopFixture{env: env, logs: &logbuf.Buffer{}}
	hooks := fakeGitHub(gh)
	hooks.CIMDDial, hooks.CIMDRoots = dial, roots
	f.base, _ = startServe(t, env, hooks, f.logs)
	f.principal = adminTenant(t, env, "CIMD", "Ada").person

	out := runNode(t, "interop-sdk.mjs", map[string]any{
		"mcpURL": f.base + "/mcp", "signinURL": f.signinLink(t), "sourceID": "none", "clientMetadataURL": docURL,
	}, 3*time.Minute)
	want := func(name string, got, want any) {
		t.Helper()
		if !jsonEqual(got, want) {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	want("cimd.clientID", at(out, "cimd", "clientID"), docURL)
	want("cimd.authorizeURL.clientID", at(out, "cimd", "authorizeURL", "clientID"), docURL)
	want("cimd.consent.approveStatus", at(out, "cimd", "consent", "approveStatus"), 303.0)
	want("cimd.consent.redirectTarget", at(out, "cimd", "consent", "redirectTarget"), "http://127.0.0.1:53682/callback")
	want("cimd.secondConnect", at(out, "cimd", "secondConnect"), "connected")
	want("cimd.tokenScope", at(out, "cimd", "tokenScope"), "memory:read documents:read")
	want("cimd.refreshed", at(out, "cimd", "refreshed"), true)
	if n := fetches.Load(); n != 1 {
		t.Errorf("the document was fetched %d times, want 1", n)
	}
	if tools, _ := at(out, "cimd", "tools").(float64); tools == 0 {
		t.Errorf("tools/list through the SDK with the CIMD token listed no tool")
	}
	if strings.Contains(f.logs.String(), `"/oauth/register"`) {
		t.Errorf("the SDK registered a client although the server offers CIMD")
	}
}
