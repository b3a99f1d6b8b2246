package github_test

import (
	"errors"
	"os/exec"
	"strings"
	"testing"

	"heyaira/github"
	"heyaira/store/storetest"
)

// Row IN-01 (docs/security-tests.md).
func TestValidatePath(t *testing.T) {
	t.Parallel()
	tests := []struct {
		path string
		ok   bool
	}{
		{"docs/CONTINUITY_PROTOCOL.md", true},
		{"a", true},
		{"docs/a b#c?d.md", true},
		{"100%.md", true}, // a lone '%' is a character, sent as %25
		{"a%z1", true},
		{"é/ü.md", true},
		{"-x/;+@:,$&=.md", true},
		{"..0/...", true},
		{".github/CODEOWNERS", true},
		{strings.Repeat("a", github.MaxPathBytes), true},

		{"", false},
		{strings.Repeat("a", github.MaxPathBytes+1), false},
		{"/docs/a.md", false},
		{"docs/", false},
		{"docs//a.md", false},
		{".", false},
		{"..", false},
		{"./a", false},
		{"a/./b", false},
		{"a/../b", false},
		{"../etc/passwd", false},
		{"a\\b", false},
		{"a\x00b", false},
		{"a\nb", false},
		{"a\x7fb", false},
		{"a\u0085b", false},          // C1 control
		{"a/..\u200b/b", false},      // reads as a .. segment
		{"docs/\u202eDM.txt", false}, // reads reversed
		{"a\u2028b", false},          // line separator
		{"\ufeffa.md", false},        // BOM
		{"docs/réüß中文.md", true},
		{"docs/\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645.md", true}, // Persian needs U+200C
		{"\U0001f469\u200d\U0001f4bb.md", true},                            // an emoji sequence, U+200D
		{"a\u2066b", false},                                                // a bidirectional isolate     // other Unicode is a name like any
		{"%2e%2e/x", false},
		{"a%2Fb", false},
		{"a%20b", false},
		{"\xff\xfe", false},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			t.Parallel()
			err := github.ValidatePath(tt.path)
			if (err == nil) != tt.ok {
				t.Fatalf("ValidatePath(%q) = %v, want ok=%v", tt.path, err, tt.ok)
			}
			if err != nil {
				wantCode(t, err, "path_invalid")
			}
		})
	}
}

// branchCases is shared by TestValidateBranch and the git cross-check.
var branchCases = []struct {
	name string
	ok   bool
}{
	{"main", true},
	{"feat/x", true},
	{"release-1.0", true},
	{"ü-branch", true},
	{"\u202emain", false},              // reads reversed
	{"ma\u200bin", false},              // reads as main
	{"\u0645\u06cc\u200c\u062e", true}, // Persian needs U+200C
	{"a@b", true},
	{"a%2e", true},
	{"heads/x", true},

	{"", false},
	{strings.Repeat("a", github.MaxBranchBytes+1), false},
	{"refs/heads/main", false},
	{"refs/tags/v1", false},
	{"HEAD", false},
	{"@", false},
	{"-main", false},
	{"/main", false},
	{"main/", false},
	{"a//b", false},
	{"a..b", false},
	{".hidden", false},
	{"a/.b", false},
	{"a.lock", false},
	{"a/b.lock/c", false},
	{"a.", false},
	{"a b", false},
	{"a~1", false},
	{"a^", false},
	{"a:b", false},
	{"a?", false},
	{"a*", false},
	{"a[", false},
	{"a\\b", false},
	{"a@{1}", false},
	{"a\x01", false},
	{"a\x7f", false},
	{"a\u0085", false},
	{"\xff", false},
}

// Row IN-01 (docs/security-tests.md).
func TestValidateBranch(t *testing.T) {
	t.Parallel()
	for _, tt := range branchCases {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := github.ValidateBranch(tt.name)
			if (err == nil) != tt.ok {
				t.Fatalf("ValidateBranch(%q) = %v, want ok=%v", tt.name, err, tt.ok)
			}
			if err != nil {
				wantCode(t, err, "invalid_argument")
				if !errors.Is(err, github.ErrBranchInvalid) {
					t.Errorf("err %v is not ErrBranchInvalid", err)
				}
			}
		})
	}
}

// TestValidateBranchStricterThanGit checks, when git is installed, that
// every name ValidateBranch accepts is also accepted by
// `git check-ref-format --branch`.
func TestValidateBranchStricterThanGit(t *testing.T) {
	t.Parallel()
	git, err := exec.LookPath("git")
	if err != nil {
		storetest.Missing(t, "skipped: git not installed; install git or run scripts/test")
	}
	for _, tt := range branchCases {
		if !tt.ok {
			continue
		}
		if out, err := exec.Command(git, "check-ref-format", "--branch", tt.name).CombinedOutput(); err != nil {
			t.Errorf("git refuses %q, which ValidateBranch accepts: %s", tt.name, out)
		}
	}
}

// Row IN-01 (docs/security-tests.md).
func TestValidateNames(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		check func(string) error
		in    string
		ok    bool
	}{
		{"owner", github.ValidateOwner, "h8v6", true},
		{"owner", github.ValidateOwner, "octo-org", true},
		{"owner", github.ValidateOwner, "jdoe_acme", true},
		{"owner", github.ValidateOwner, strings.Repeat("a", 39), true},
		{"owner", github.ValidateOwner, "", false},
		{"owner", github.ValidateOwner, strings.Repeat("a", 40), false},
		{"owner", github.ValidateOwner, "-octo", false},
		{"owner", github.ValidateOwner, "octo/docs", false},
		{"owner", github.ValidateOwner, "octo.org", false},
		{"owner", github.ValidateOwner, "..", false},
		{"owner", github.ValidateOwner, "oc%74o", false},
		{"repo", github.ValidateRepo, "heyaira", true},
		{"repo", github.ValidateRepo, "my.repo_name-2", true},
		{"repo", github.ValidateRepo, ".github", true},
		{"repo", github.ValidateRepo, "", false},
		{"repo", github.ValidateRepo, ".", false},
		{"repo", github.ValidateRepo, "..", false},
		{"repo", github.ValidateRepo, "repo.git", false},
		{"repo", github.ValidateRepo, "a/b", false},
		{"repo", github.ValidateRepo, "a b", false},
		{"repo", github.ValidateRepo, strings.Repeat("r", 101), false},
		{"sha", github.ValidateCommitSHA, commit, true},
		{"sha", github.ValidateCommitSHA, strings.ToUpper(commit), false},
		{"sha", github.ValidateCommitSHA, commit[:39], false},
		{"sha", github.ValidateCommitSHA, commit + "0", false},
		{"sha", github.ValidateCommitSHA, "main", false},
		{"sha", github.ValidateCommitSHA, strings.Repeat("g", 40), false},
	}
	for _, tt := range tests {
		t.Run(tt.name+"/"+tt.in, func(t *testing.T) {
			t.Parallel()
			err := tt.check(tt.in)
			if (err == nil) != tt.ok {
				t.Fatalf("%s(%q) = %v, want ok=%v", tt.name, tt.in, err, tt.ok)
			}
			if err != nil {
				wantCode(t, err, "invalid_argument")
			}
		})
	}
}
