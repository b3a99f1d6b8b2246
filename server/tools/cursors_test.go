package tools_test

// Continuation-cursor rows of the attack matrix (docs/security-tests.md §2.3)
// beyond the cursor package's own vectors and fuzzing.

import (
	"encoding/base64"
	"math"
	"strings"
	"testing"
	"time"

	"heyaira/cursor"
	"heyaira/github/githubtest"
	"heyaira/oauth"
	"heyaira/server/internal/servertest"
	"heyaira/server/tools"
)

// Rows CU-01 to CU-04 through the server: a tampered, truncated,
// extended, re-encoded, empty or oversized cursor, one minted for another
// principal, another project or another source, and a cursor combined with
// start_byte are all refused before any GitHub request, and the message
// never echoes the cursor.
// Row AZ-05 (docs/security-tests.md).
func TestCU01to04CursorMisuseReachesNothing(t *testing.T) {
	t.Parallel()
	e := servertest.New(t)
	tn := e.NewTenant("o", "r")
	doc := servertest.MixedText(5000)
	e.GH.AddFile("o", "r", servertest.CommitA, "a.md", doc)
	e.GH.AddFile("o", "r", servertest.CommitA, "b.md", doc)
	srcA := e.AddSource(tn, "runtime", "a.md", servertest.CommitA, "", 1000)
	srcB := e.AddSource(tn, "runtime", "b.md", servertest.CommitA, "", 1000)
	tok := e.Token(tn, "documents:read")
	sc, _, _ := e.Call(tok, "git_document_get", map[string]any{"source_id": srcA})
	cur := sc["next_cursor"].(string)
	before := e.GH.Count(githubtest.RouteContents)

	raw, err := base64.RawURLEncoding.DecodeString(cur)
	if err != nil {
		t.Fatalf("the cursor is not base64url: %v", err)
	}
	var tampered []string
	for i := 0; i < len(raw)*8; i += max(1, len(raw)*8/64) { // 64 bit flips spread over the cursor
		b := append([]byte(nil), raw...)
		b[i/8] ^= 1 << (i % 8)
		tampered = append(tampered, base64.RawURLEncoding.EncodeToString(b))
	}
	tampered = append(tampered,
		cur[:len(cur)-1], cur+"A", base64.StdEncoding.EncodeToString(raw), cur+"==", "",
		strings.Repeat("A", 64<<10))
	for _, c := range tampered {
		sc := e.WantCode(tok, "git_document_get", map[string]any{"source_id": srcA, "cursor": c}, "cursor_invalid")
		if msg := sc["error"].(map[string]any)["message"].(string); len(c) > 8 && strings.Contains(msg, c[:8]) {
			t.Errorf("the message echoes the cursor: %q", msg)
		}
	}
	// CU-02: another principal of the same project.
	bob := e.QueryString(`INSERT INTO principals (account_id, name) VALUES ($1, 'bob') RETURNING id`, tn.Account)
	e.Exec(`INSERT INTO project_members (project_id, principal_id) VALUES ($1, $2)`, tn.Project, bob)
	e.WantCode(e.Token(servertest.Tenant{Project: tn.Project, Principal: bob}, "documents:read"), "git_document_get",
		map[string]any{"source_id": srcA, "cursor": cur}, "cursor_invalid")
	// CU-03: another project, even with a source of the same path.
	other := e.NewTenant("o", "r")
	otherSrc := e.AddSource(other, "runtime", "a.md", servertest.CommitA, "", 1000)
	e.WantCode(e.Token(other, "documents:read"), "git_document_get", map[string]any{"source_id": otherSrc, "cursor": cur}, "cursor_invalid")
	// CU-04: another source; a cursor with start_byte.
	e.WantCode(tok, "git_document_get", map[string]any{"source_id": srcB, "cursor": cur}, "cursor_invalid")
	e.WantCode(tok, "git_document_get", map[string]any{"source_id": srcA, "cursor": cur, "start_byte": 0}, "invalid_argument")
	if n := e.GH.Count(githubtest.RouteContents) - before; n != 0 {
		t.Errorf("%d GitHub requests for refused cursors", n)
	}
}

// Row CU-05(b): a source revoked and added again gets a new source_id; the
// old cursor fails with source_revoked on the old id and cursor_invalid on
// the new one. (CU-05(a), a file changed between pages, is in
// TestDocumentCursors.)
func TestCU05ReAddedSourceDoesNotInheritCursors(t *testing.T) {
	t.Parallel()
	e := servertest.New(t)
	tn := e.NewTenant("o", "r")
	e.GH.AddFile("o", "r", servertest.CommitA, "a.md", servertest.MixedText(3000))
	old := e.AddSource(tn, "runtime", "a.md", servertest.CommitA, "", 1000)
	tok := e.Token(tn, "documents:read")
	sc, _, _ := e.Call(tok, "git_document_get", map[string]any{"source_id": old})
	cur := sc["next_cursor"].(string)
	e.Exec(`UPDATE document_sources SET revoked_at = now() WHERE id = $1`, old)
	readded := e.AddSource(tn, "runtime", "a.md", servertest.CommitA, "", 1000)
	e.WantCode(tok, "git_document_get", map[string]any{"source_id": old, "cursor": cur}, "source_revoked")
	e.WantCode(tok, "git_document_get", map[string]any{"source_id": readded, "cursor": cur}, "cursor_invalid")
}

// Row CU-07: cursors validly signed with the server's key but carrying a
// hostile offset — past the end, inside a UTF-8 sequence, 2^63−1 — are
// refused with byte_range_invalid: bounds are checked again after the MAC,
// and nothing panics. A negative offset cannot be signed (cursor.Encode
// panics, TestEncodePanics) nor decoded (FuzzDecodeAuthentic).
func TestCU07SignedCursorWithHostileOffset(t *testing.T) {
	t.Parallel()
	e := servertest.New(t)
	tn := e.NewTenant("o", "r")
	doc := []byte("aé€😀 and more text")
	e.GH.AddFile("o", "r", servertest.CommitA, "a.md", doc)
	src := e.AddSource(tn, "runtime", "a.md", servertest.CommitA, "", 1000)
	tok := e.Token(tn, "documents:read")
	for name, off := range map[string]int64{
		"past the end": int64(len(doc)) + 1, "inside é": 2, "inside 😀": 8, "2^63-1": math.MaxInt64,
	} {
		c := e.Cursors.Encode(cursor.Cursor{Kind: tools.CursorKindDoc, Project: tn.Project, Principal: "principal:" + tn.Principal,
			Source: src, Commit: servertest.CommitA, Path: "a.md", Offset: off, FileSHA256: servertest.HexSHA(doc), Expires: time.Now().Add(time.Minute)})
		sc, isErr, raw := e.Call(tok, "git_document_get", map[string]any{"source_id": src, "cursor": c})
		if code, _ := sc["error"].(map[string]any)["code"].(string); !isErr || code != "byte_range_invalid" {
			t.Errorf("%s: %s, want byte_range_invalid", name, raw)
		}
	}
	// The boundary itself is a valid, empty final fragment.
	c := e.Cursors.Encode(cursor.Cursor{Kind: tools.CursorKindDoc, Project: tn.Project, Principal: "principal:" + tn.Principal,
		Source: src, Commit: servertest.CommitA, Path: "a.md", Offset: int64(len(doc)), FileSHA256: servertest.HexSHA(doc), Expires: time.Now().Add(time.Minute)})
	if sc, isErr, raw := e.Call(tok, "git_document_get", map[string]any{"source_id": src, "cursor": c}); isErr || sc["content"] != "" {
		t.Errorf("offset = total: %s", raw)
	}
}

// Row CU-09: a 300 KB document read in 64 KB pages makes exactly one
// contents request per page, and every page is authorized afresh: revoking
// the token after any page fails the next call (401), restoring it lets the
// same cursor continue.
func TestCU09EveryPageReauthorizes(t *testing.T) {
	t.Parallel()
	e := servertest.New(t)
	tn := e.NewTenant("o", "r")
	doc := servertest.MixedText(300_000)
	e.GH.AddFile("o", "r", servertest.CommitA, "big.md", doc)
	src := e.AddSource(tn, "runtime", "big.md", servertest.CommitA, "", 65536)
	tok := e.Token(tn, "documents:read")
	args := map[string]any{"source_id": src}
	pages, got := 0, 0
	for {
		sc, isErr, raw := e.Call(tok, "git_document_get", args)
		if isErr {
			t.Fatalf("page %d: %s", pages, raw)
		}
		pages++
		got += len(sc["content"].(string))
		next, ok := sc["next_cursor"].(string)
		if !ok {
			break
		}
		args = map[string]any{"source_id": src, "cursor": next}
		e.Exec(`UPDATE oauth_tokens SET revoked_at = now() WHERE token_hash = $1`, oauth.Hash(tok))
		if r := e.RPC(tok, "tools/call", map[string]any{"name": "git_document_get", "arguments": args}); r.Status != 401 {
			t.Fatalf("after page %d with the token revoked: HTTP %d", pages, r.Status)
		}
		e.Exec(`UPDATE oauth_tokens SET revoked_at = NULL WHERE token_hash = $1`, oauth.Hash(tok))
	}
	if got != len(doc) || pages < 5 {
		t.Fatalf("read %d bytes in %d pages", got, pages)
	}
	if n := e.GH.Count(githubtest.RouteContents); n != pages {
		t.Errorf("%d contents requests for %d pages", n, pages)
	}
}
