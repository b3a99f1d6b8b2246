package oauth

import (
	"strings"
	"testing"
)

// TestOA14ConsentPageEscapes: client-chosen names are escaped and stripped
// of bidirectional overrides; documents:read has its own unticked line.
func TestOA14ConsentPageEscapes(t *testing.T) {
	t.Parallel()
	ordinary, docs := NewScopeChoices([]string{"documents:read", "memory:read", "tasks:write"})
	var b strings.Builder
	err := ConsentPage{
		Action: PathAuthorize, ClientID: "c1", ClientName: `<script>alert(1)</script>"><img onerror=x>` + "\u202Egnp.exe",
		Principal: "Ada", RedirectURI: "http://127.0.0.1:5/cb", RedirectHost: "127.0.0.1:5", Loopback: true,
		Projects: []ProjectChoice{{ID: "p1", Name: "Continuity", Checked: true}},
		Scopes:   ordinary, Documents: docs, Request: "hyq_x", CSRF: "tok",
	}.Render(&b)
	if err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, bad := range []string{"<script>", "<img", "\u202E"} {
		if strings.Contains(page, bad) {
			t.Errorf("page contains %q", bad)
		}
	}
	for _, want := range []string{"&lt;script&gt;", "127.0.0.1:5", `value="memory:read" checked`,
		`value="tasks:write" checked`, `value="documents:read">`, `class="documents"`, "on your own computer"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}

func TestDisplayText(t *testing.T) {
	t.Parallel()
	if got := DisplayText("a\u202Eb\x00c\xff"); got != "abc\uFFFD" {
		t.Errorf("DisplayText = %q", got)
	}
	if got := DisplayText(strings.Repeat("é", 150)); got != strings.Repeat("é", MaxDisplayText)+"…" {
		t.Errorf("DisplayText did not cut: %d bytes", len(got))
	}
	if got := CleanName(strings.Repeat("é", 150)); len(got) != 300 {
		t.Errorf("CleanName changed a clean name")
	}
}

func TestSecrets(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for range 1000 {
		s := NewSecret(PrefixAccess)
		if !WellFormedSecret(s, PrefixAccess) || WellFormedSecret(s, PrefixRefresh) || seen[s] {
			t.Fatalf("bad or repeated secret %q", s)
		}
		seen[s] = true
	}
	if MAC("k", "a", "bc") == MAC("k", "ab", "c") || MAC("k", "l", "a", "b") == MAC("k", "l", "ab") {
		t.Error("MAC is ambiguous")
	}
	if !Equal("x", "x") || Equal("x", "y") {
		t.Error("Equal wrong")
	}
}

// TestOA16Metadata: everything comes from the issuer; PKCE is advertised.
func TestOA16Metadata(t *testing.T) {
	t.Parallel()
	m := NewServerMetadata("https://h.example")
	if m.Issuer != "https://h.example" || m.TokenEndpoint != "https://h.example/oauth/token" ||
		m.CodeChallengeMethodsSupported[0] != "S256" || !m.AuthorizationResponseIss ||
		m.TokenEndpointAuthMethodsSupported[0] != "none" || len(m.ScopesSupported) != len(Supported) {
		t.Errorf("metadata = %+v", m)
	}
}
