package server

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"heyaira/store"
)

// Row BT-32: a write over a project's storage quota is the tool error
// quota_exceeded, naming the quota and its limit, and changes nothing;
// deleting makes room again.
func TestBT32QuotaExceededToolError(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	tn := e.newTenant("o", "r")
	tok := e.token(tn, "memory:read", "memory:write", "tasks:write")
	if _, err := e.db.SetProjectLimits(context.Background(), tn.project, store.LimitsUpdate{MemoryEntries: ptr(1), Tasks: ptr(0)}); err != nil {
		t.Fatal(err)
	}
	if _, isErr, raw := e.call(tok, "memory_put", map[string]any{"key": "a", "content": "x"}); isErr {
		t.Fatalf("first put: %s", raw)
	}
	sc := e.wantCode(tok, "memory_put", map[string]any{"key": "b", "content": "y"}, "quota_exceeded")
	if obj := sc["error"].(map[string]any); obj["quota"] != "memory_entries" || obj["limit"] != 1.0 {
		t.Errorf("quota_exceeded fields: %v", obj)
	}
	e.wantCode(tok, "memory_get", map[string]any{"key": "b"}, "not_found")
	e.wantCode(tok, "task_create", map[string]any{"title": "t"}, "quota_exceeded")
	if n := e.countRows("tasks"); n != 0 {
		t.Errorf("%d tasks after a refused create", n)
	}
	if _, isErr, raw := e.call(tok, "memory_delete", map[string]any{"key": "a"}); isErr {
		t.Fatalf("delete: %s", raw)
	}
	if _, isErr, raw := e.call(tok, "memory_put", map[string]any{"key": "b", "content": "y"}); isErr {
		t.Errorf("put after a delete: %s", raw)
	}
}

// Row BT-36: a signed-in principal with store.MaxPendingRequests consent
// pages open gets a 429 page (with Retry-After) for the next authorization
// request, and no request is stored for it.
func TestBT36PendingAuthorizationBound(t *testing.T) {
	t.Parallel()
	e, _ := newOAuthEnv(t)
	tn := e.newTenant("o", "r")
	c := e.register("http://127.0.0.1:48213/cb")
	b := e.browser(t)
	b.signIn(tn.principal)
	for range store.MaxPendingRequests {
		b.consent(c.authorizeQuery("memory:read"))
	}
	before := e.countRows("oauth_requests")
	p := b.get("/oauth/authorize?" + c.authorizeQuery("memory:read").Encode())
	if p.status != http.StatusTooManyRequests || p.header.Get("Retry-After") == "" || strings.Contains(p.body, `name="decision"`) {
		t.Errorf("authorization request over the bound: %d %q %s", p.status, p.header.Get("Retry-After"), p.body)
	}
	if n := e.countRows("oauth_requests"); n != before {
		t.Errorf("%d requests stored, was %d", n, before)
	}
}

// Issue 31: a wrong argument name lists the tool's fields, and a wrong type
// says which JSON type the field takes, so a client can correct itself.
func TestArgumentErrorsNameTheFields(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	tok := e.token(e.newTenant("o", "r"), "memory:read", "memory:write")
	for want, args := range map[string]map[string]any{
		`unknown field "value"; the fields are key, content`:      {"key": "k", "value": "x"},
		`field "content" has the wrong type: it must be a string`: {"key": "k", "content": 5},
	} {
		sc := e.wantCode(tok, "memory_put", args, "invalid_argument")
		if msg, _ := sc["error"].(map[string]any)["message"].(string); !strings.Contains(msg, want) {
			t.Errorf("memory_put(%v): %q, want %q", args, msg, want)
		}
	}
}
