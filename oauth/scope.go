package oauth

import (
	"errors"
	"strings"
)

// DocumentsRead is the scope that lets a token read allowlisted documents.
// It is never granted unless the consent page showed it on its own line and
// the principal ticked it.
const DocumentsRead = "documents:read"

// Supported is every scope this server knows, in the order the consent page
// and every scope string list them.
var Supported = []string{
	"memory:read", "memory:write", "tasks:read", "tasks:write",
	DocumentsRead, "workflows:read", "workflows:write",
}

// Descriptions are the consent page's plain-language line for each scope.
var Descriptions = map[string]string{
	"memory:read":  "Read the project's memory",
	"memory:write": "Create, change and delete the project's memory",
	"tasks:read":   "Read the project's tasks",
	"tasks:write":  "Create and update the project's tasks",
	DocumentsRead:  "Read the documents an administrator allowlisted in the project's GitHub repositories",
	"workflows:read": "Read the agent profile catalog and the project's workflows: their layers, hashes and sizes. " +
		"Not the instruction text from GitHub: that also needs reading documents",
	"workflows:write": "Dispatch and correct workflows (assemble agent instructions for a task). " +
		"Instructions from GitHub documents also need reading documents; without it only built-in profiles can be dispatched",
}

// MaxScopeLen bounds a scope parameter.
const MaxScopeLen = 1024

// ErrInvalidScope is returned by ParseScope for a malformed scope string,
// and by ParseRequestedScope when nothing known remains.
var ErrInvalidScope = errors.New("oauth: invalid scope")

// ParseScope parses a space-delimited scope string (RFC 6749 §3.3) of known
// scopes only. Repeats collapse; the result is in Supported order. An empty
// string gives an empty list.
func ParseScope(s string) ([]string, error) {
	known, unknown, ok := splitScope(s)
	if !ok || unknown {
		return nil, ErrInvalidScope
	}
	return known, nil
}

// ParseRequestedScope parses the scope parameter of an authorization
// request. Unknown scope tokens (such as "offline_access" or "openid", which
// some clients add) are ignored, because RFC 6749 §3.3 lets the server grant
// less than asked and the token response names what was granted. An absent
// or empty parameter means every supported scope: that is what the
// TypeScript and Go SDK clients ask for when a 401 names no scope, so both
// paths show the same consent page. A string that names no known scope is
// ErrInvalidScope.
func ParseRequestedScope(s string) ([]string, error) {
	if strings.Trim(s, " ") == "" {
		return append([]string(nil), Supported...), nil
	}
	known, _, ok := splitScope(s)
	if !ok || len(known) == 0 {
		return nil, ErrInvalidScope
	}
	return known, nil
}

// splitScope returns the known scopes of s in Supported order and whether s
// names an unknown one; ok is false when s is malformed.
func splitScope(s string) (known []string, unknown, ok bool) {
	if len(s) > MaxScopeLen {
		return nil, false, false
	}
	seen := map[string]bool{}
	for _, tok := range strings.Split(s, " ") {
		if tok == "" {
			continue // tolerate repeated spaces
		}
		if unprintable(tok, `"\`) { // scope-token = 1*( %x21 / %x23-5B / %x5D-7E )
			return nil, false, false
		}
		if Descriptions[tok] == "" {
			unknown = true
			continue
		}
		seen[tok] = true
	}
	return inOrder(nil, seen), unknown, true
}

// Canonical returns the known scopes of list, without repeats, in Supported order.
func Canonical(list []string) []string {
	seen := map[string]bool{}
	for _, s := range list {
		seen[s] = true
	}
	return inOrder([]string{}, seen)
}

// inOrder appends the scopes of seen to out in Supported order.
func inOrder(out []string, seen map[string]bool) []string {
	for _, sc := range Supported {
		if seen[sc] {
			out = append(out, sc)
		}
	}
	return out
}

// Format joins scopes with single spaces, in Supported order.
func Format(list []string) string { return strings.Join(Canonical(list), " ") }
