package mcp

import (
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"heyaira/oauth"
	"heyaira/server/internal/web"
	"heyaira/store"
)

// principal is the authenticated caller of an /mcp request.
type Principal struct {
	Auth store.Auth
}

// subject is the stable name of the caller, for audit rows and cursor binding.
func (p Principal) Subject() string {
	if p.Auth.Kind == "legacy" {
		return "legacy:" + p.Auth.TokenID
	}
	return "principal:" + p.Auth.PrincipalID
}

func (p Principal) HasScope(s string) bool { return slices.Contains(p.Auth.Scopes, s) }

// missing is the refusal of a call that needs scopes the token lacks.
func (p Principal) Missing(needed ...string) *ScopeError {
	return &ScopeError{needed: needed, granted: p.Auth.Scopes, legacy: p.Auth.Kind == "legacy"}
}

// needDocuments refuses a result carrying text read from GitHub to a caller
// without documents:read, whatever the tool's own scope: that scope is the
// one explicit grant that lets an agent read GitHub text. own is the tool's
// scope, named first in the challenge.
func (p Principal) NeedDocuments(own string, fromGitHub bool) error {
	if !fromGitHub || p.HasScope(oauth.DocumentsRead) {
		return nil
	}
	return p.Missing(own, oauth.DocumentsRead)
}

// maxBearerLen bounds the token we hash and look up.
const maxBearerLen = 512

// parseBearer extracts the token from an Authorization header value. The
// scheme is case-insensitive (RFC 9110); the token must be an RFC 6750
// b64token. It never returns the header on error.
func parseBearer(h string) (string, bool) {
	scheme, tok, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	tok = strings.TrimLeft(tok, " ")
	if tok == "" || len(tok) > maxBearerLen {
		return "", false
	}
	// Trim leaves nothing exactly when every byte is in the alphabet.
	if body := strings.TrimRight(tok, "="); body == "" || strings.Trim(body, b64tokenChars) != "" {
		return "", false
	}
	return tok, true
}

// b64tokenChars is RFC 6750's b64token alphabet, before the "=" padding.
const b64tokenChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~+/"

func writeUnauthorized(w http.ResponseWriter, cfg *Config, invalid bool, msg string) {
	v := "Bearer "
	if invalid {
		v += `error="invalid_token", `
	}
	w.Header().Set("WWW-Authenticate", v+`resource_metadata="`+cfg.resourceMetadataURL()+`"`)
	writeRPCError(w, http.StatusUnauthorized, nil, &rpcError{CodeInvalidRequest, msg})
}

// scopeError makes the MCP handler answer 403 insufficient_scope.
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

// checkOrigin protects /mcp from DNS rebinding and cross-site browsers: a
// present Origin must be the server's own or one configured; and when the
// server's public URL is a loopback address, Host must be a loopback name.
func CheckOrigin(cfg *Config) func(http.Handler) http.Handler {
	public, _ := url.Parse(cfg.PublicURL)
	allowed := append([]string{public.Scheme + "://" + public.Host}, cfg.AllowedOrigins...)
	loopbackOnly := isLoopbackHost(public.Hostname())
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if o := r.Header.Get("Origin"); o != "" && !slices.Contains(allowed, strings.TrimRight(o, "/")) {
				writeRPCError(w, http.StatusForbidden, nil, &rpcError{CodeInvalidRequest, "origin not allowed"})
				return
			}
			if loopbackOnly && !isLoopbackHost(web.HostOf(r.Host)) {
				writeRPCError(w, http.StatusForbidden, nil, &rpcError{CodeInvalidRequest, "invalid Host header"})
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

func isLoopbackHost(h string) bool {
	h = strings.Trim(h, "[]")
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}
