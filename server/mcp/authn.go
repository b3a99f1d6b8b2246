package mcp

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"heyaira/oauth"
	"heyaira/server/internal/web"
	"heyaira/store"
)

// Authenticator checks a bearer token by its hash. It returns
// store.ErrNotFound for an unknown, expired or revoked token.
type Authenticator func(ctx context.Context, tokenHash []byte) (store.Auth, error)

// StoreAuthenticator is the production authenticator.
func StoreAuthenticator(st *store.DB, now func() time.Time) Authenticator {
	return func(ctx context.Context, tokenHash []byte) (store.Auth, error) {
		return st.Authenticate(ctx, tokenHash, now())
	}
}

// bearerHash returns the hash of r's bearer token, or answers 401 and returns
// false when the Authorization header is missing or malformed, or the token
// is not one this server minted (an access or legacy token whose MAC
// verifies and whose embedded expiry has not passed: oauth/minted.go). So a
// made-up token is refused here, before the body is read and before any
// store call, with the same answer as an unknown one.
func bearerHash(w http.ResponseWriter, r *http.Request, cfg *Config) ([]byte, bool) {
	h := r.Header.Get("Authorization")
	if h == "" {
		writeUnauthorized(w, cfg, false, "authorization required")
		return nil, false
	}
	tok, ok := parseBearer(h)
	if !ok {
		writeUnauthorized(w, cfg, true, "malformed bearer token")
		return nil, false
	}
	if now := cfg.Now(); !cfg.Secrets.Valid(tok, oauth.PrefixAccess, now) && !cfg.Secrets.Valid(tok, oauth.PrefixLegacy, now) {
		writeUnauthorized(w, cfg, true, tokenRefused)
		return nil, false
	}
	return oauth.Hash(tok), true
}

// tokenRefused is the one answer to a token that is not, or no longer, valid.
const tokenRefused = "the token is invalid, expired or revoked"

// authorize re-authorizes the request from the database: the token must
// exist, be unexpired and unrevoked, its grant unrevoked, its audience this
// server's resource, and its principal still a member of the project. On
// failure it has answered and returns false. Only a token this server
// minted gets here (bearerHash), so each request costs one indexed lookup,
// whoever sends it.
//
// If the database cannot answer, the request fails closed with 503 and
// Retry-After, never 401: a 401 would send every client into a refresh storm.
func authorize(w http.ResponseWriter, r *http.Request, logger *slog.Logger, cfg *Config, authn Authenticator, tokenHash []byte) (Principal, bool) {
	a, err := authn(r.Context(), tokenHash)
	switch {
	case errors.Is(err, store.ErrNotFound):
		writeUnauthorized(w, cfg, true, tokenRefused)
		return Principal{}, false
	case err != nil:
		logger.WarnContext(r.Context(), "authorization lookup failed", "req_id", web.RequestID(r.Context()), "err", err)
		w.Header().Set("Retry-After", "2")
		writeRPCError(w, http.StatusServiceUnavailable, nil, &rpcError{CodeInternalError, "store_unavailable: the database is unavailable; retry later"})
		return Principal{}, false
	}
	// Because a token issued for another resource must not work here
	// (RFC 8707), the audience is compared exactly; legacy tokens predate
	// audiences and are bound to their project instead.
	if a.Kind == "oauth" && a.Resource != cfg.resource() {
		writeUnauthorized(w, cfg, true, "the token was issued for another resource")
		return Principal{}, false
	}
	p := Principal{Auth: a}
	web.AddLog(r.Context(), slog.String("project", a.ProjectID), slog.String("principal", p.Subject()))
	return p, true
}
