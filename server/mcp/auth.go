package mcp

import (
	"net/http"
	"slices"
	"strings"

	"heyaira/oauth"
	"heyaira/store"
)

// Principal is the authenticated caller of an /mcp request.
type Principal struct {
	Auth store.Auth
}

// Subject is the stable name of the caller, for audit rows and cursor binding.
func (p Principal) Subject() string {
	if p.Auth.Kind == "legacy" {
		return "legacy:" + p.Auth.TokenID
	}
	return "principal:" + p.Auth.PrincipalID
}

func (p Principal) HasScope(s string) bool { return slices.Contains(p.Auth.Scopes, s) }

// Missing is the refusal of a call that needs scopes the token lacks.
func (p Principal) Missing(needed ...string) *ScopeError {
	return &ScopeError{needed: needed, granted: p.Auth.Scopes, legacy: p.Auth.Kind == "legacy"}
}

// NeedDocuments refuses a result carrying text read from GitHub to a caller
// without documents:read, whatever the tool's own scope: that scope is the
// one explicit grant that lets an agent read GitHub text. own is the tool's
// scope, named first in the challenge.
func (p Principal) NeedDocuments(own string, fromGitHub bool) error {
	if !fromGitHub || p.HasScope(oauth.DocumentsRead) {
		return nil
	}
	return p.Missing(own, oauth.DocumentsRead)
}

// ScopeError makes the MCP handler answer 403 insufficient_scope.
type ScopeError struct {
	needed  []string // the scopes the call needs, the tool's own first
	granted []string // the scopes the token holds
	legacy  bool     // the token is a legacy token, which no step-up can widen
}

func (e *ScopeError) Error() string { return e.message() }

// message is the public reason. A legacy token holds memory and task scopes
// only and is never issued more, so telling its client to step up would send
// it into an OAuth flow that cannot help: the message says what to do instead.
func (e *ScopeError) message() string {
	if e.legacy {
		return "insufficient scope: legacy tokens can never read documents or use workflows; " +
			"connect this client with OAuth (the server URL alone is enough) and approve " + strings.Join(e.needed, " ")
	}
	return "insufficient scope: " + strings.Join(e.needed, " ") + " is required"
}

// challenge is the scope a client should ask for on step-up: the ones needed
// plus every one already granted, in oauth.Supported order after the needed.
// A client that replaces its scopes with the challenge's (rather than adding
// to them) then keeps what it had.
func (e *ScopeError) challenge() string {
	out := slices.Clone(e.needed)
	for _, s := range oauth.Supported {
		if !slices.Contains(out, s) && slices.Contains(e.granted, s) {
			out = append(out, s)
		}
	}
	return strings.Join(out, " ")
}

func writeInsufficientScope(w http.ResponseWriter, cfg *Config, se *ScopeError) {
	// The message has no web.Quote or backslash, so it is a valid quoted-string.
	w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="`+se.challenge()+
		`", error_description="`+se.message()+`", resource_metadata="`+cfg.resourceMetadataURL()+`"`)
	writeRPCError(w, http.StatusForbidden, nil, &rpcError{CodeInvalidRequest, se.message()})
}
