package store_test

import (
	"errors"
	"testing"
	"time"

	"heyaira/store"
	"heyaira/store/storetest"
)

// TestCIMDClientRows: a document URL's client is one row, updated in place
// (its id, which grants reference, stays); it is found by URL, never by its
// uuid as if it were a registered client.
func TestCIMDClientRows(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	ctx := t.Context()
	const url = "https://claude.ai/oauth/claude-code-client-metadata"
	if _, err := db.CIMDClientByURL(ctx, url); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("before any fetch: %v, want ErrNotFound", err)
	}
	now := time.Now().UTC().Truncate(time.Microsecond)
	save := func(name string, uris ...string) store.CIMDClient {
		t.Helper()
		c, err := db.SaveCIMDClient(ctx, store.CIMDClient{Client: store.Client{Name: name, RedirectURIs: uris,
			GrantTypes: []string{"authorization_code"}}, URL: url, FetchedAt: now, FreshUntil: now.Add(time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	first := save("Claude Code", "http://localhost/callback")
	second := save("Claude Code 2", "http://127.0.0.1/callback")
	if first.ID != second.ID || second.Name != "Claude Code 2" || second.RedirectURIs[0] != "http://127.0.0.1/callback" {
		t.Errorf("update: %+v then %+v; want the same id with the new document", first, second)
	}
	got, err := db.Client(ctx, url)
	if err != nil || got.ID != first.ID || !got.HasGrantType("authorization_code") || got.HasGrantType("refresh_token") {
		t.Errorf("Client(url) = %+v, %v", got, err)
	}
	if !second.FreshUntil.Equal(now.Add(time.Hour)) {
		t.Errorf("fresh_until = %v, want %v", second.FreshUntil, now.Add(time.Hour))
	}
	if _, err := db.Client(ctx, first.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Client(uuid of a CIMD row): %v, want ErrNotFound", err)
	}
	if _, err := db.SaveCIMDClient(ctx, store.CIMDClient{Client: store.Client{Name: "x", RedirectURIs: []string{"https://a/b"}},
		URL: "http://claude.ai/x", FetchedAt: now, FreshUntil: now}); err == nil {
		t.Errorf("an http metadata_url was stored")
	}
}
