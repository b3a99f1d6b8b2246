package github

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits on names, from docs/design.md §5 and GitHub's character sets.
const (
	// MaxPathBytes is the longest document path accepted.
	MaxPathBytes = 1024
	// MaxBranchBytes is the longest branch name accepted.
	MaxBranchBytes = 255
	maxOwnerBytes  = 39
	maxRepoBytes   = 100
)

// RuleError is a validator's refusal. Kind is the sentinel it wraps
// (ErrPathInvalid, ErrBranchInvalid or ErrInvalidName); Rule names the rule
// that was broken, never the whole value.
type RuleError struct {
	Kind error
	Rule string
}

func (e *RuleError) Error() string { return e.Kind.Error() + ": " + e.Rule }
func (e *RuleError) Unwrap() error { return e.Kind }

// ValidatePath checks a document path against docs/design.md §5, as the
// cases below say; a lone '%' is an ordinary character, sent as "%25". The
// error wraps ErrPathInvalid and names the rule, never the whole path.
//
// A valid path survives per-segment url.PathEscape and unescape unchanged,
// and path.Clean leaves it as it is, so it cannot name another location in
// the request URL.
func ValidatePath(p string) error {
	bad := func(why string) error { return &RuleError{Kind: ErrPathInvalid, Rule: why} }
	switch {
	case p == "":
		return bad("empty")
	case len(p) > MaxPathBytes:
		return bad(fmt.Sprintf("longer than %d bytes", MaxPathBytes))
	case !utf8.ValidString(p):
		return bad("not valid UTF-8")
	case strings.ContainsRune(p, '\\'):
		return bad("contains a backslash")
	case hasControl(p):
		return bad("contains a control character")
	case hasInvisible(p):
		return bad(invisible)
	case hasPercentEscape(p):
		return bad("contains a percent-escape")
	case strings.HasPrefix(p, "/"):
		return bad("starts with '/': give the path relative to the repository root, e.g. docs/a.md")
	case strings.HasSuffix(p, "/"):
		return bad("ends with '/': give the path of a file, not of a directory")
	}
	for i, seg := range strings.Split(p, "/") {
		switch seg {
		case "":
			return bad(fmt.Sprintf("segment %d is empty", i+1))
		case ".", "..":
			return bad(fmt.Sprintf("segment %d is %q", i+1, seg))
		}
	}
	return nil
}

// ValidateOwner checks a GitHub user or organization login: 1 to 39 ASCII
// letters, digits, '-' or '_' (enterprise managed users carry "_shortcode"),
// starting with a letter or digit. The error wraps ErrInvalidName.
func ValidateOwner(s string) error {
	if len(s) == 0 || len(s) > maxOwnerBytes || !isAlnum(s[0]) {
		return &RuleError{Kind: ErrInvalidName, Rule: fmt.Sprintf("owner must be 1 to %d characters starting with a letter or digit", maxOwnerBytes)}
	}
	if strings.Trim(s, alnum+"-_") != "" {
		return &RuleError{Kind: ErrInvalidName, Rule: "owner may hold only letters, digits, '-' and '_'"}
	}
	return nil
}

// ValidateRepo checks a repository name (without the owner): 1 to 100 ASCII
// letters, digits, '.', '-' or '_', not "." or "..", and not ending in
// ".git" (GitHub strips that suffix, so the name would mean another
// repository). The error wraps ErrInvalidName.
func ValidateRepo(s string) error {
	if len(s) == 0 || len(s) > maxRepoBytes || s == "." || s == ".." {
		return &RuleError{Kind: ErrInvalidName, Rule: fmt.Sprintf("repository must be 1 to %d characters and not \".\" or \"..\"", maxRepoBytes)}
	}
	if strings.HasSuffix(strings.ToLower(s), ".git") {
		return &RuleError{Kind: ErrInvalidName, Rule: "repository must not end in \".git\""}
	}
	if strings.Trim(s, alnum+".-_") != "" {
		return &RuleError{Kind: ErrInvalidName, Rule: "repository may hold only letters, digits, '.', '-' and '_'"}
	}
	return nil
}

// ValidateCommitSHA checks that s is a full commit SHA-1: exactly 40
// lowercase hexadecimal characters. The error wraps ErrInvalidName.
func ValidateCommitSHA(s string) error {
	if !isSHA1Hex(s) {
		return &RuleError{Kind: ErrInvalidName, Rule: "commit SHA must be exactly 40 lowercase hex characters"}
	}
	return nil
}

func isSHA1Hex(s string) bool {
	return len(s) == 40 && strings.Trim(s, "0123456789abcdef") == ""
}

const alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

func isAlnum(c byte) bool { return strings.IndexByte(alnum, c) >= 0 }

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// hasControl reports whether s holds a C0, DEL or C1 control character.
func hasControl(s string) bool { return strings.ContainsFunc(s, unicode.IsControl) }

// hasInvisible reports whether s holds a character that changes how a path
// or branch reads in a listing, an audit line or an agent's bootstrap
// without showing itself: the bidirectional marks, embeddings, overrides and
// isolates, U+200B and the invisible operators U+2060–U+2064, U+FEFF, and
// the line and paragraph separators. The zero-width joiner and non-joiner
// (U+200C, U+200D) stay allowed: Persian, Indic scripts and emoji need them.
func hasInvisible(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool {
		return r == 0x061c || r == 0x200b || r == 0x200e || r == 0x200f || r == 0xfeff || r == 0x2028 || r == 0x2029 ||
			r >= 0x202a && r <= 0x202e || r >= 0x2060 && r <= 0x2064 || r >= 0x2066 && r <= 0x2069
	})
}

const invisible = "contains an invisible character (such as U+200B, a bidirectional mark or override, or a line separator)"

func hasPercentEscape(s string) bool {
	for i := 0; i+2 < len(s); i++ {
		if s[i] == '%' && isHex(s[i+1]) && isHex(s[i+2]) {
			return true
		}
	}
	return false
}
