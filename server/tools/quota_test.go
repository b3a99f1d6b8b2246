package tools_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"heyaira/server/internal/servertest"
	"heyaira/store"
)

// Row BT-32: a write over a project's storage quota is the tool error
// quota_exceeded, naming the quota and its limit, and changes nothing;
// deleting makes room again.
func TestBT32QuotaExceededToolError(t *testing.T) {
	t.Parallel()
	e := servertest.New(t)
	tn := e.NewTenant("o", "r")
	tok := e.Token(tn, "memory:read", "memory:write", "tasks:write")
	if _, err := e.DB.SetProjectLimits(context.Background(), tn.Project, store.LimitsUpdate{MemoryEntries: ptr(1), Tasks: ptr(0)}); err != nil {
		t.Fatal(err)
	}
	if _, isErr, raw := e.Call(tok, "memory_put", map[string]any{"key": "a", "content": "x"}); isErr {
		t.Fatalf("first put: %s", raw)
	}
	sc := e.WantCode(tok, "memory_put", map[string]any{"key": "b", "content": "y"}, "quota_exceeded")
	if obj := sc["error"].(map[string]any); obj["quota"] != "memory_entries" || obj["limit"] != 1.0 {
		t.Errorf("quota_exceeded fields: %v", obj)
	}
	e.WantCode(tok, "memory_get", map[string]any{"key": "b"}, "not_found")
	e.WantCode(tok, "task_create", map[string]any{"title": "t"}, "quota_exceeded")
	if n := e.CountRows("tasks"); n != 0 {
		t.Errorf("%d tasks after a refused create", n)
	}
	if _, isErr, raw := e.Call(tok, "memory_delete", map[string]any{"key": "a"}); isErr {
		t.Fatalf("delete: %s", raw)
	}
	if _, isErr, raw := e.Call(tok, "memory_put", map[string]any{"key": "b", "content": "y"}); isErr {
		t.Errorf("put after a delete: %s", raw)
	}
}

// Row BT-36: a signed-in principal with store.MaxPendingRequests consent
// pages open gets a 429 page (with Retry-After) for the next authorization
// request, and no request is stored for it.
func TestBT36PendingAuthorizationBound(t *testing.T) {
	t.Parallel()
	e, _ := servertest.NewOAuth(t)
	tn := e.NewTenant("o", "r")
	c := e.Register("http://127.0.0.1:48213/cb")
	b := e.Browser(t)
	b.SignIn(tn.Principal)
	for range store.MaxPendingRequests {
		b.Consent(c.AuthorizeQuery("memory:read"))
	}
	before := e.CountRows("oauth_requests")
	p := b.Get("/oauth/authorize?" + c.AuthorizeQuery("memory:read").Encode())
	if p.Status != http.StatusTooManyRequests || p.Header.Get("Retry-After") == "" || strings.Contains(p.Body, `name="decision"`) {
		t.Errorf("authorization request over the bound: %d %q %s", p.Status, p.Header.Get("Retry-After"), p.Body)
	}
	if n := e.CountRows("oauth_requests"); n != before {
		t.Errorf("%d requests stored, was %d", n, before)
	}
}

// A wrong argument name lists the tool's fields, and a wrong type
// says which JSON type the field takes, so a client can correct itself.
func TestArgumentErrorsNameTheFields(t *testing.T) {
	t.Parallel()
	e := servertest.New(t)
	tok := e.Token(e.NewTenant("o", "r"), "memory:read", "memory:write")
	for want, args := range map[string]map[string]any{
		`unknown field "value"; the fields are key, content`:      {"key": "k", "value": "x"},
		`field "content" has the wrong type: it must be a string`: {"key": "k", "content": 5},
	} {
		sc := e.WantCode(tok, "memory_put", args, "invalid_argument")
		if msg, _ := sc["error"].(map[string]any)["message"].(string); !strings.Contains(msg, want) {
			t.Errorf("memory_put(%v): %q, want %q", args, msg, want)
		}
	}
}
