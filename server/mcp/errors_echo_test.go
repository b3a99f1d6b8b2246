package mcp_test

import (
	"strings"
	"testing"

	"heyaira/server/internal/servertest"
)

// A name the caller sent (an unknown envelope member, a duplicate key, an
// unknown argument or tool) is echoed in an error cut to web.MaxQuoted
// bytes: whole and escaped twice, a 1 MiB key of '<' from an anonymous
// caller (the parse runs before authentication) would draw a 7 MiB answer.
func TestErrorsEchoNamesCut(t *testing.T) {
	t.Parallel()
	e := servertest.New(t)
	tok := e.Token(e.NewTenant("o", "r"), "memory:read")
	long := strings.Repeat("<", 900<<10)
	for name, body := range map[string]string{
		"unknown member": `{"jsonrpc":"2.0","id":1,"method":"ping","` + long + `":1}`,
		"duplicate key":  `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"` + long[:400<<10] + `":1,"` + long[:400<<10] + `":2}}`,
		"unknown tool":   `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + long + `","arguments":{}}}`,
		"unknown arg":    `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"memory_get","arguments":{"` + long + `":1}}}`,
	} {
		r := e.Post(body, "Authorization", "Bearer "+tok)
		if len(r.Raw) > 4096 || !strings.Contains(string(r.Raw), "…") {
			t.Errorf("%s: a %d-byte answer to a %d-byte name: %.200s", name, len(r.Raw), len(long), r.Raw)
		}
	}
}
