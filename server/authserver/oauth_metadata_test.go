package authserver_test

import (
	"net/http"
	"net/url"
	"testing"

	"heyaira/server"
	"heyaira/server/internal/servertest"

	"github.com/google/go-cmp/cmp"
)

// TestOA16MetadataFromConfigOnly: both metadata documents come from
// HEYAIRA_PUBLIC_URL, whatever Host and X-Forwarded-* say.
func TestOA16MetadataFromConfigOnly(t *testing.T) {
	t.Parallel()
	e := servertest.New(t, func(c *server.Config) { c.PublicURL = "https://heyaira.example" })
	get := func(path string) map[string]any {
		req, _ := http.NewRequest("GET", e.Srv.URL+path, nil)
		req.Host = "evil.example"
		req.Header.Set("X-Forwarded-Host", "evil.example")
		req.Header.Set("X-Forwarded-Proto", "http")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("%s: %d %s", path, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		var m map[string]any
		servertest.DecodeBody(t, resp, &m)
		return m
	}
	as := get("/.well-known/oauth-authorization-server")
	prm := get("/.well-known/oauth-protected-resource/mcp")
	want := map[string]any{
		"issuer":                                         "https://heyaira.example",
		"authorization_endpoint":                         "https://heyaira.example/oauth/authorize",
		"token_endpoint":                                 "https://heyaira.example/oauth/token",
		"registration_endpoint":                          "https://heyaira.example/oauth/register",
		"revocation_endpoint":                            "https://heyaira.example/oauth/revoke",
		"scopes_supported":                               []any{"memory:read", "memory:write", "tasks:read", "tasks:write", "documents:read", "workflows:read", "workflows:write"},
		"response_types_supported":                       []any{"code"},
		"response_modes_supported":                       []any{"query"},
		"grant_types_supported":                          []any{"authorization_code", "refresh_token"},
		"token_endpoint_auth_methods_supported":          []any{"none"},
		"revocation_endpoint_auth_methods_supported":     []any{"none"},
		"code_challenge_methods_supported":               []any{"S256"},
		"authorization_response_iss_parameter_supported": true,
		"client_id_metadata_document_supported":          false,
	}
	if diff := cmp.Diff(want, as); diff != "" {
		t.Errorf("RFC 8414 metadata (-want +got):\n%s", diff)
	}
	if prm["resource"] != "https://heyaira.example/mcp" || prm["authorization_servers"].([]any)[0] != as["issuer"] {
		t.Errorf("PRM %v does not name the issuer %v", prm, as["issuer"])
	}
	if diff := cmp.Diff(prm["scopes_supported"], as["scopes_supported"]); diff != "" {
		t.Errorf("PRM and AS scopes differ (-prm +as):\n%s", diff)
	}
}

// TestOA16RefusedGrantAndResponseTypes: password, client_credentials and
// the implicit flow do not exist here.
// Rows BT-40, JK-11 (docs/security-tests.md).
func TestOA16RefusedGrantAndResponseTypes(t *testing.T) {
	t.Parallel()
	e, _ := servertest.NewOAuth(t)
	c := e.Register("https://client.example/cb")
	for _, gt := range []string{"password", "client_credentials", "urn:ietf:params:oauth:grant-type:device_code"} {
		// A stray code or refresh token does not change the answer: only the
		// grants that take one check its MAC.
		r := e.Form("/oauth/token", url.Values{"grant_type": {gt}, "client_id": {c.ID}, "username": {"a"}, "password": {"b"},
			"code": {"hyc_made-up"}, "refresh_token": {"hyr_made-up"}})
		if r.Status != 400 || r.Body["error"] != "unsupported_grant_type" {
			t.Errorf("grant_type=%s: %d %s", gt, r.Status, r.Raw)
		}
	}
	q := c.AuthorizeQuery("")
	q.Set("response_type", "token")
	if link := errorLink(t, e.Browser(t).Get("/oauth/authorize?"+q.Encode())); link.Query().Get("error") != "unsupported_response_type" {
		t.Errorf("response_type=token: link %q", link)
	}
}
