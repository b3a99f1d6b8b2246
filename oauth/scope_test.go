package oauth

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseScope(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want []string
		err  bool
	}{
		{"", nil, false},
		{"memory:read", []string{"memory:read"}, false},
		{"documents:read memory:read  memory:read", []string{"memory:read", "documents:read"}, false},
		{"memory:read offline_access", nil, true},
		{"memory:read\tdocuments:read", nil, true},
		{`memory:read "x"`, nil, true},
	}
	for _, tt := range tests {
		got, err := ParseScope(tt.in)
		if (err != nil) != tt.err {
			t.Errorf("ParseScope(%q) err = %v, want error %v", tt.in, err, tt.err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("ParseScope(%q) mismatch (-want +got):\n%s", tt.in, diff)
		}
	}
}

// TestDefaultScopes pins the judgement call of docs/oauth.md: an absent
// scope means every supported scope (what SDK clients ask for anyway), and
// unknown scope tokens are ignored unless nothing known remains.
func TestDefaultScopes(t *testing.T) {
	t.Parallel()
	got, err := ParseRequestedScope("")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Supported, got); diff != "" {
		t.Errorf("default scopes mismatch (-want +got):\n%s", diff)
	}
	got, err = ParseRequestedScope("offline_access memory:read openid")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"memory:read"}, got); diff != "" {
		t.Errorf("unknown scopes not dropped (-want +got):\n%s", diff)
	}
	if _, err := ParseRequestedScope("admin:all"); !errors.Is(err, ErrInvalidScope) {
		t.Errorf("ParseRequestedScope(admin:all) = %v, want ErrInvalidScope", err)
	}
}

func TestScopeSets(t *testing.T) {
	t.Parallel()
	a := []string{"documents:read", "memory:read"}
	if got := Format(a); got != "memory:read documents:read" {
		t.Errorf("Format = %q", got)
	}
}
