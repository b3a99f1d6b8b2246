package mcp

import (
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"heyaira/server/internal/web"
)

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

// CheckOrigin protects /mcp from DNS rebinding and cross-site browsers: a
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
