package mcp_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"heyaira/oauth"
	"heyaira/server"
	"heyaira/server/internal/servertest"
)

// Rows AZ-12, IN-09 (docs/security-tests.md).
func TestMCPTransport(t *testing.T) {
	t.Parallel()
	e := servertest.New(t, func(c *server.Config) { c.AllowedOrigins = []string{"https://app.example"} })
	tn := e.NewTenant("o", "r")
	tok := e.Token(tn, "memory:read")
	auth := "Bearer " + tok
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`

	tests := []struct {
		name       string
		body       string
		headers    []string
		wantStatus int
		wantBody   string // substring
	}{
		{"ping", ping, []string{"Authorization", auth}, 200, `{"jsonrpc":"2.0","id":1,"result":{}}`},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, []string{"Authorization", auth}, 202, ""},
		{"client response", `{"jsonrpc":"2.0","id":5,"result":{}}`, []string{"Authorization", auth}, 202, ""},
		{"batch", "[" + ping + "]", []string{"Authorization", auth}, 400, `"code":-32600`},
		{"parse error", `{"jsonrpc"`, []string{"Authorization", auth}, 400, `"code":-32700`},
		{"bad protocol version", ping, []string{"Authorization", auth, "MCP-Protocol-Version", "1999-01-01"}, 400, `MCP-Protocol-Version`},
		{"good protocol version", ping, []string{"Authorization", auth, "MCP-Protocol-Version", "2025-06-18"}, 200, `"result":{}`},
		{"content type", ping, []string{"Authorization", auth, "Content-Type", "text/plain"}, 415, ""},
		{"content type with charset", ping, []string{"Authorization", auth, "Content-Type", "application/json; charset=utf-8"}, 200, `"result":{}`},
		{"foreign origin", ping, []string{"Authorization", auth, "Origin", "https://evil.example"}, 403, ""},
		{"allowed origin", ping, []string{"Authorization", auth, "Origin", "https://app.example"}, 200, ""},
		{"rebinding host", ping, []string{"Authorization", auth, "Host", "evil.example.com"}, 403, ""},
		{"unknown method", `{"jsonrpc":"2.0","id":"x","method":"server/discover"}`, []string{"Authorization", auth}, 200, `"code":-32601`},
		{"resources/templates/list", `{"jsonrpc":"2.0","id":2,"method":"resources/templates/list"}`, []string{"Authorization", auth}, 200, `"uriTemplate":"heyaira://sources/{source_id}"`},
		{"unknown tool", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"nope"}}`, []string{"Authorization", auth}, 200, `"code":-32602`},
		{"arguments not an object", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"memory_get","arguments":[1]}}`, []string{"Authorization", auth}, 200, `"code":-32602`},
		{"sse only accept", ping, []string{"Authorization", auth, "Accept", "text/event-stream"}, 200, "event: message\ndata: "},
		{"too large", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + strings.Repeat("a", 1<<20) + `"}}`, []string{"Authorization", auth}, 413, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.Post(tt.body, tt.headers...)
			if r.Status != tt.wantStatus || !strings.Contains(string(r.Raw), tt.wantBody) {
				t.Fatalf("HTTP %d %s; want %d containing %q", r.Status, r.Raw, tt.wantStatus, tt.wantBody)
			}
			if strings.Contains(string(r.Raw), `"error":null`) || strings.Contains(string(r.Raw), `"id":null`) {
				t.Errorf("response carries a null error or id: %s", r.Raw)
			}
		})
	}
}

// Row AZ-01 (docs/security-tests.md).
func TestMCPGetAndDeleteAre405(t *testing.T) {
	t.Parallel()
	e := servertest.New(t)
	for _, m := range []string{"GET", "DELETE"} {
		req, _ := http.NewRequest(m, e.Srv.URL+"/mcp", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 405 || resp.Header.Get("Allow") != "POST" {
			t.Errorf("%s /mcp = %d Allow %q, want 405 Allow POST", m, resp.StatusCode, resp.Header.Get("Allow"))
		}
	}
}

// Row AZ-10 (docs/security-tests.md).
func TestInitializeNegotiatesVersion(t *testing.T) {
	t.Parallel()
	e := servertest.New(t)
	tok := e.Token(e.NewTenant("o", "r"), "memory:read")
	for requested, want := range map[string]string{
		"2025-11-25": "2025-11-25", "2025-06-18": "2025-06-18", "2025-03-26": "2025-03-26",
		"2024-11-05": "2024-11-05", "2099-01-01": "2025-11-25",
	} {
		r := e.RPC(tok, "initialize", map[string]any{"protocolVersion": requested, "capabilities": map[string]any{},
			"clientInfo": map[string]any{"name": "t", "version": "1"}})
		res, _ := r.Body["result"].(map[string]any)
		if r.Status != 200 || res["protocolVersion"] != want {
			t.Errorf("initialize(%s) = %d %s, want version %s", requested, r.Status, r.Raw, want)
		}
		if strings.Contains(string(r.Raw), "Mcp-Session-Id") || r.Header.Get("Mcp-Session-Id") != "" {
			t.Errorf("stateless server issued a session id")
		}
	}
}

func TestToolsListShape(t *testing.T) {
	t.Parallel()
	e := servertest.New(t)
	tok := e.LegacyToken(e.NewTenant("o", "r"))
	r := e.RPC(tok, "tools/list", nil)
	tools, _ := r.Body["result"].(map[string]any)["tools"].([]any)
	names := map[string]bool{}
	for _, x := range tools {
		tl := x.(map[string]any)
		name, _ := tl["name"].(string)
		names[name] = true
		schema, _ := tl["inputSchema"].(map[string]any)
		ann, _ := tl["annotations"].(map[string]any)
		if tl["description"] == "" || schema["type"] != "object" || schema["additionalProperties"] != false {
			t.Errorf("tool %s: bad description or inputSchema: %v", name, tl)
		}
		if ann["openWorldHint"] != false {
			t.Errorf("tool %s: openWorldHint must be false", name)
		}
		// Every length bound is in bytes; JSON Schema's maxLength counts
		// characters, so a schema with one would admit what the call refuses.
		for prop, ps := range schema["properties"].(map[string]any) {
			if _, ok := ps.(map[string]any)["maxLength"]; ok {
				t.Errorf("tool %s: %s has a maxLength in characters", name, prop)
			}
		}
		if strings.HasSuffix(name, "_get") || strings.HasSuffix(name, "_list") {
			if ann["readOnlyHint"] != true {
				t.Errorf("tool %s: read tool without readOnlyHint", name)
			}
			continue
		}
		// A tool that replaces or deletes says so, so that a client asks
		// before it runs; the rest only add (MCP's default is destructive).
		destructive := map[string]bool{"memory_put": true, "memory_delete": true, "task_update": true}[name]
		if ann["readOnlyHint"] != false || ann["destructiveHint"] != destructive || ann["idempotentHint"] != destructive {
			t.Errorf("tool %s: annotations %v, want destructiveHint and idempotentHint %v", name, ann, destructive)
		}
	}
	// A legacy token sees every tool, including those it cannot call.
	for _, want := range []string{"runtime_bootstrap_get", "git_document_get", "memory_put", "task_list"} {
		if !names[want] {
			t.Errorf("tools/list lacks %s", want)
		}
	}
	if strings.Contains(string(r.Raw), "null") {
		t.Errorf("tools/list carries a null: %s", r.Raw)
	}
}

// Rows AZ-01, AZ-02 (docs/security-tests.md).
func TestBearerChallenges(t *testing.T) {
	t.Parallel()
	e := servertest.New(t)
	tn := e.NewTenant("o", "r")
	meta := `resource_metadata="` + e.Cfg.PublicURL + `/.well-known/oauth-protected-resource/mcp"`
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`

	expired := e.Token(tn, "memory:read")
	// Expired by the server's clock (e.clock, which stands still), not the
	// database's: on a loaded machine the two can be seconds apart.
	e.Exec(`UPDATE oauth_tokens SET expires_at = $2 WHERE token_hash = $1`, oauth.Hash(expired), e.Clock.Now().Add(-time.Second))
	revoked := e.Token(tn, "memory:read")
	e.Exec(`UPDATE oauth_tokens SET revoked_at = now() WHERE token_hash = $1`, oauth.Hash(revoked))
	grantRevoked := e.Token(tn, "memory:read")
	e.Exec(`UPDATE oauth_grants SET revoked_at = now() WHERE id = (SELECT grant_id FROM oauth_tokens WHERE token_hash = $1)`, oauth.Hash(grantRevoked))
	otherAudience := e.Token(tn, "memory:read")
	e.Exec(`UPDATE oauth_tokens SET resource = 'https://elsewhere.example/mcp' WHERE token_hash = $1`, oauth.Hash(otherAudience))
	exMember := e.Token(tn, "memory:read")
	legacyRevoked := e.LegacyToken(tn)
	e.Exec(`UPDATE legacy_tokens SET revoked_at = now() WHERE token_hash = $1`, oauth.Hash(legacyRevoked))

	tests := []struct {
		name, header, want string
	}{
		{"no header", "", `Bearer ` + meta},
		{"basic scheme", "Basic dXNlcjpwYXNz", `Bearer error="invalid_token", ` + meta},
		{"unknown token", "Bearer hya_unknown", `Bearer error="invalid_token", ` + meta},
		{"expired", "Bearer " + expired, `Bearer error="invalid_token", ` + meta},
		{"revoked", "Bearer " + revoked, `Bearer error="invalid_token", ` + meta},
		{"grant revoked", "Bearer " + grantRevoked, `Bearer error="invalid_token", ` + meta},
		{"other audience", "Bearer " + otherAudience, `Bearer error="invalid_token", ` + meta},
		{"legacy revoked", "Bearer " + legacyRevoked, `Bearer error="invalid_token", ` + meta},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r servertest.Reply
			if tt.header == "" {
				r = e.Post(ping)
			} else {
				r = e.Post(ping, "Authorization", tt.header)
			}
			if r.Status != 401 || r.Header.Get("WWW-Authenticate") != tt.want {
				t.Fatalf("HTTP %d WWW-Authenticate %q; want 401 %q", r.Status, r.Header.Get("WWW-Authenticate"), tt.want)
			}
		})
	}
	// Membership is re-checked on every request.
	if r := e.Post(ping, "Authorization", "Bearer "+exMember); r.Status != 200 {
		t.Fatalf("member: HTTP %d", r.Status)
	}
	// Raw SQL on purpose: the membership row alone goes, the token stays
	// unrevoked, so this shows the join of the token check. remove-member,
	// which also revokes the tokens, is TestAZ08CursorNeverAuthorizes's case.
	e.Exec(`DELETE FROM project_members WHERE project_id = $1`, tn.Project)
	if r := e.Post(ping, "Authorization", "Bearer "+exMember); r.Status != 401 {
		t.Fatalf("after removal from the project: HTTP %d, want 401", r.Status)
	}
}

// Row DB-01 (docs/security-tests.md).
func TestStoreDownIs503NotUnauthorized(t *testing.T) {
	t.Parallel()
	e := servertest.New(t)
	tok := e.Token(e.NewTenant("o", "r"), "memory:read")
	e.DB.Close() // the database stops answering
	r := e.Post(`{"jsonrpc":"2.0","id":1,"method":"ping"}`, "Authorization", "Bearer "+tok)
	if r.Status != 503 || r.Header.Get("Retry-After") == "" || r.Header.Get("WWW-Authenticate") != "" {
		t.Fatalf("HTTP %d Retry-After %q WWW-Authenticate %q; want 503 with Retry-After and no challenge",
			r.Status, r.Header.Get("Retry-After"), r.Header.Get("WWW-Authenticate"))
	}
}

func TestProtectedResourceMetadata(t *testing.T) {
	t.Parallel()
	e := servertest.New(t)
	for path, resource := range map[string]string{
		"/.well-known/oauth-protected-resource/mcp": e.Cfg.PublicURL + "/mcp",
		"/.well-known/oauth-protected-resource":     e.Cfg.PublicURL,
	} {
		req, _ := http.NewRequest("GET", e.Srv.URL+path, nil)
		req.Host = "attacker.example" // metadata is built from configuration, never from Host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		servertest.DecodeBody(t, resp, &doc)
		if resp.StatusCode != 200 || doc["resource"] != resource {
			t.Errorf("GET %s: %d resource %v, want %s", path, resp.StatusCode, doc["resource"], resource)
		}
		if as, _ := doc["authorization_servers"].([]any); len(as) != 1 || as[0] != e.Cfg.PublicURL {
			t.Errorf("GET %s: authorization_servers %v", path, doc["authorization_servers"])
		}
	}
}
