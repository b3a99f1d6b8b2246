package systemtest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"heyaira/oauth"
	"heyaira/store/storetest"
)

// TestInteropGoSDK runs the official MCP Go SDK client (v1.8.0, the newest
// the module proxy serves; scripts/gosdk, its own module) against the real
// server, in its default mode (it probes server/discover and speaks
// 2026-07-28) and forced to the legacy era (initialize, 2025-11-25). Each
// lists the tools, puts and gets memory and reads the document with an
// access token.
func TestInteropGoSDK(t *testing.T) {
	t.Parallel()
	bin := buildGoSDKClient(t)
	f := newInteropFixture(t)
	tok := newToken(t, oauth.PrefixAccess, time.Hour)
	storetest.InsertAccessToken(t, f.env["HEYAIRA_DATABASE_URL"], f.principal, f.project, f.base+"/mcp", tok,
		[]string{"memory:read", "memory:write", "documents:read", "workflows:read"})
	sum := sha256.Sum256(f.doc)
	for mode, version := range map[string]string{"default": "2026-07-28", "legacy": "2025-11-25"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			arg, _ := json.Marshal(map[string]string{"url": f.base + "/mcp", "token": tok, "source_id": f.source, "mode": mode})
			ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
			defer cancel()
			var stdout, stderr bytes.Buffer
			cmd := exec.CommandContext(ctx, bin, string(arg))
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("Go SDK client (%s): %v\n%s", mode, err, stderr.String())
			}
			var out map[string]any
			if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
				t.Fatalf("output %q: %v", stdout.String(), err)
			}
			if out["protocolVersion"] != version {
				t.Errorf("negotiated %v, want %s", out["protocolVersion"], version)
			}
			tools, _ := out["tools"].([]any)
			if len(tools) != 14 || !slices.Contains(tools, any("git_document_get")) {
				t.Errorf("tools = %v", tools)
			}
			if at(out, "memoryPut", "isError") != false || at(out, "memoryGet", "structuredContent", "content") != "from the Go SDK é" {
				t.Errorf("memory through the SDK: %v / %v", out["memoryPut"], out["memoryGet"])
			}
			if at(out, "document", "isError") != false || at(out, "document", "structuredContent", "sha256") != hex.EncodeToString(sum[:]) {
				t.Errorf("git_document_get through the SDK: %v", out["document"])
			}
		})
	}
}

// TestInteropTypeScriptSDKv2 runs the official TypeScript SDK v2 client
// (@modelcontextprotocol/client, pinned in scripts/js/package.json) in its
// auto mode (it probes server/discover and speaks 2026-07-28) and its
// legacy mode (initialize). Each mode is given only the MCP URL and runs
// the whole OAuth flow (discovery from the 401, registration, PKCE, the
// consent page), then makes the same calls as TestInteropGoSDK and reads
// the resources and prompts.
func TestInteropTypeScriptSDKv2(t *testing.T) {
	t.Parallel()
	// In the parent, before the fixture: when the Node packages are missing
	// the test itself skips. Left to the subtests, it reported PASS with
	// every subtest skipped.
	jsDir(t)
	f := newInteropFixture(t)
	sum := sha256.Sum256(f.doc)
	for mode, version := range map[string]string{"auto": "2026-07-28", "legacy": "2025-11-25"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			out := runNode(t, "interop-sdk-v2.mjs", map[string]string{"url": f.base + "/mcp", "signinURL": f.signinLink(t),
				"sourceID": f.source, "largeID": f.large, "mode": mode}, 90*time.Second)
			flow := map[string]any{"firstConnect": at(out, "flow", "firstConnect"), "secondConnect": at(out, "flow", "secondConnect"),
				"endpoint": at(out, "flow", "authorizeURL", "endpoint"), "method": at(out, "flow", "authorizeURL", "codeChallengeMethod"),
				"resource": at(out, "flow", "authorizeURL", "resource"), "stateMatches": at(out, "flow", "stateMatches"),
				"issMatches": at(out, "flow", "issMatches"), "tokenScope": at(out, "flow", "tokenScope")}
			if want := map[string]any{"firstConnect": "unauthorized", "secondConnect": "connected",
				"endpoint": f.base + "/oauth/authorize", "method": "S256", "resource": f.base + "/mcp",
				"stateMatches": true, "issMatches": true, "tokenScope": "memory:read memory:write documents:read workflows:read",
			}; !jsonEqual(flow, want) {
				t.Errorf("OAuth flow through the SDK = %v, want %v", flow, want)
			}
			if out["protocolVersion"] != version {
				t.Errorf("negotiated %v, want %s", out["protocolVersion"], version)
			}
			if tools, _ := out["tools"].([]any); len(tools) != 14 {
				t.Errorf("tools = %v", tools)
			}
			if at(out, "memoryGet", "structuredContent", "content") != "from TS v2 é" {
				t.Errorf("memory_get: %v", out["memoryGet"])
			}
			if at(out, "document", "isError") == true || at(out, "document", "structuredContent", "sha256") != hex.EncodeToString(sum[:]) {
				t.Errorf("git_document_get: %v", out["document"])
			}
			f.checkSurfaces(t, out["surfaces"])
		})
	}
}

// buildGoSDKClient builds scripts/gosdk offline: scripts/test has fetched
// its modules (pinned by its go.sum).
func buildGoSDKClient(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "gosdk")
	cmd := exec.CommandContext(t.Context(), "go", "build", "-o", bin, ".")
	cmd.Dir = filepath.Join("scripts", "gosdk")
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod", "GOPROXY=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the Go SDK client (run scripts/test, which fetches its modules): %v\n%s", err, out)
	}
	return bin
}
