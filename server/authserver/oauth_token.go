package authserver

import (
	"encoding/base64"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"heyaira/oauth"
	"heyaira/server/internal/web"
	"heyaira/store"
)

// tokenResponse is RFC 6749 §5.1. token_type, expires_in and scope are
// always present; the TypeScript SDK requires token_type.
type tokenResponse struct {
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type"`
	ExpiresIn    int64  `json:"expires_in"`
	Scope        string `json:"scope"`
	RefreshToken string `json:"refresh_token,omitempty"`
}

// HandleToken serves POST /oauth/token: authorization_code (PKCE S256 only)
// and refresh_token (rotating).
//
// Check order: form → client (public: client_id in the body, or HTTP Basic
// with an empty password) → grant type → request syntax and the code's or
// refresh token's MAC → the store's single-use transaction, in which the
// code's bindings and PKCE are checked. A client_id, code or refresh token
// this server never minted is refused before any store call.
func HandleToken(logger *slog.Logger, cfg *Config, st *store.DB) http.Handler {
	return withOAuthCORS(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		form, err := readForm(w, r)
		if err != nil {
			writeOAuthError(w, http.StatusBadRequest, oauth.ErrCodeInvalidRequest, err.Error())
			return
		}
		lookup, oerr, status := tokenClient(r, cfg, st, form)
		if oerr == nil {
			if oe := unmintedGrant(cfg, form); oe != nil {
				writeTokenError(w, r, logger, oe)
				return
			}
		}
		var client store.Client
		if oerr == nil {
			client, oerr, status = lookup()
		}
		if oerr != nil {
			writeClientError(w, r, logger, oerr, status)
			return
		}
		web.AddLog(r.Context(), slog.String("client_id", client.ID))
		var iss store.Issued
		now := cfg.Now()
		access, refresh := cfg.Secrets.Mint(oauth.PrefixAccess, now.Add(AccessTTL)),
			cfg.Secrets.Mint(oauth.PrefixRefresh, now.Add(RefreshFamilyTTL)) // no family outlives it
		switch form.Get("grant_type") {
		case "authorization_code":
			iss, err = redeemCode(r, cfg, st, client, form, access, refresh)
		case "refresh_token":
			iss, err = rotateRefresh(r, cfg, st, client, form, access, refresh)
		case "":
			err = oauth.NewError(oauth.ErrCodeInvalidRequest, "grant_type is required")
		default:
			err = oauth.NewError(oauth.ErrCodeUnsupportedGrantType, "supported: authorization_code, refresh_token")
		}
		if err != nil {
			writeTokenError(w, r, logger, err)
			return
		}
		web.AddLog(r.Context(), slog.String("project", iss.ProjectID), slog.String("code", "ok"))
		resp := tokenResponse{AccessToken: access, TokenType: "Bearer", ExpiresIn: int64(AccessTTL.Seconds()),
			Scope: oauth.Format(iss.Scopes)}
		if iss.Refresh {
			resp.RefreshToken = refresh
		}
		writeOAuthJSON(w, http.StatusOK, resp)
	}))
}

// writeClientError answers a refused client authentication at the token
// and the revocation endpoint alike: RFC 6749 §5.2 (which RFC 7009 §2.2.1
// applies to revocation) wants a 401 to a client that sent an Authorization
// header to name the scheme it should use.
func writeClientError(w http.ResponseWriter, r *http.Request, logger *slog.Logger, oerr *oauth.Error, status int) {
	if status == http.StatusUnauthorized && r.Header.Get("Authorization") != "" {
		w.Header().Set("WWW-Authenticate", `Basic realm="heyaira"`)
	}
	if status == http.StatusServiceUnavailable {
		logger.WarnContext(r.Context(), "client lookup failed", "req_id", web.RequestID(r.Context()))
	}
	web.AddLog(r.Context(), slog.String("code", oerr.Code))
	writeOAuthError(w, status, oerr.Code, oerr.Description)
}

// clientLookup finds the client a request named, once the request has
// passed every check that needs no store call.
type clientLookup func() (store.Client, *oauth.Error, int)

// tokenClient authenticates a public client: it names itself by client_id
// in the body or as the user of HTTP Basic with an empty password (which
// golang.org/x/oauth2 tries first). A client secret is refused: none was
// ever issued. A client_id this server never assigned, or a metadata URL
// not listed, is refused here; a plausible one is returned as its lookup.
func tokenClient(r *http.Request, cfg *Config, st *store.DB, form oauth.Form) (clientLookup, *oauth.Error, int) {
	refuse := func(code, desc string, status int) (clientLookup, *oauth.Error, int) {
		return nil, oauth.NewError(code, desc), status
	}
	const secretRefused = "this server has public clients only: no client secret"
	id := form.Get("client_id")
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, cred, _ := strings.Cut(h, " ")
		raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(cred))
		user, pass, ok := strings.Cut(string(raw), ":")
		if !strings.EqualFold(scheme, "Basic") || err != nil || !ok {
			return refuse(oauth.ErrCodeInvalidClient, "malformed client authentication", http.StatusUnauthorized)
		}
		if user, err = url.QueryUnescape(user); err != nil || pass != "" {
			return refuse(oauth.ErrCodeInvalidClient, secretRefused, http.StatusUnauthorized)
		}
		if id != "" && id != user {
			return refuse(oauth.ErrCodeInvalidRequest, "two different client ids", http.StatusBadRequest)
		}
		id = user
	}
	if form.Has("client_secret") {
		return refuse(oauth.ErrCodeInvalidClient, secretRefused, http.StatusUnauthorized)
	}
	if id == "" {
		return refuse(oauth.ErrCodeInvalidClient, "client_id is required", http.StatusUnauthorized)
	}
	key, ok := clientKey(cfg, id)
	if !ok {
		return refuse(oauth.ErrCodeInvalidClient, unknownClient, http.StatusUnauthorized)
	}
	return func() (store.Client, *oauth.Error, int) {
		c, err := st.Client(r.Context(), key)
		if errors.Is(err, store.ErrNotFound) {
			return store.Client{}, oauth.NewError(oauth.ErrCodeInvalidClient, unknownClient), http.StatusUnauthorized
		}
		if err != nil {
			return store.Client{}, oauth.NewError(oauth.ErrCodeTemporarilyUnavailable, "retry later"), http.StatusServiceUnavailable
		}
		return c, nil, 0
	}, nil, 0
}

const unknownClient = "unknown client"

// unmintedGrant refuses a code or refresh token this server never minted
// (or whose embedded expiry has passed), before the client is looked up.
func unmintedGrant(cfg *Config, form oauth.Form) *oauth.Error {
	var prefix, v, desc string
	switch form.Get("grant_type") {
	case "authorization_code":
		prefix, v, desc = oauth.PrefixCode, form.Get("code"), "invalid authorization code"
	case "refresh_token":
		prefix, v, desc = oauth.PrefixRefresh, form.Get("refresh_token"), "invalid refresh token"
	}
	if v == "" || cfg.Secrets.Valid(v, prefix, cfg.Now()) {
		return nil // no grant, or a missing secret, gets its own answer after the client
	}
	return oauth.NewError(oauth.ErrCodeInvalidGrant, desc)
}

// redeemCode runs the authorization_code grant. Request syntax is checked
// before the code is touched; the code's own bindings (client, expiry,
// redirect URI, resource, PKCE) inside the store's transaction, after the
// code is consumed: a code dies on its first failed redemption.
func redeemCode(r *http.Request, cfg *Config, st *store.DB, c store.Client, form oauth.Form,
	access, refresh string) (store.Issued, error) {
	code, verifier := form.Get("code"), form.Get("code_verifier")
	resource, resourceOK := canonicalResource(cfg, form.Get("resource"))
	if oe := firstFailed(
		check{code == "", oauth.ErrCodeInvalidRequest, "code is required"},
		check{verifier == "", oauth.ErrCodeInvalidRequest, "code_verifier is required (PKCE)"},
		check{!resourceOK, oauth.ErrCodeInvalidTarget, "resource must be " + cfg.resource()},
		check{!cfg.Secrets.Valid(code, oauth.PrefixCode, cfg.Now()), oauth.ErrCodeInvalidGrant, "invalid authorization code"},
	); oe != nil {
		return store.Issued{}, oe
	}
	redirectURI := form.Get("redirect_uri")
	tokens := store.NewTokens{AccessHash: oauth.Hash(access), AccessTTL: AccessTTL, RefreshTTL: RefreshFamilyTTL}
	if c.HasGrantType("refresh_token") {
		tokens.RefreshHash = oauth.Hash(refresh)
	}
	return st.RedeemCode(r.Context(), store.CodeRedemption{
		CodeHash: oauth.Hash(code), ClientID: c.ID, Now: cfg.Now(), Tokens: tokens,
		Check: func(g store.CodeGrant) error {
			// redirect_uri is compared exactly with the one the code was
			// issued for. It is required when the authorization request
			// carried one (RFC 6749 §4.1.3); a client that sent none there,
			// relying on its one registered URI, may omit it here too.
			if oe := firstFailed(
				check{g.RedirectURISent && redirectURI == "", oauth.ErrCodeInvalidGrant,
					"redirect_uri is required: the authorization request had one"},
				check{redirectURI != "" && redirectURI != g.RedirectURI, oauth.ErrCodeInvalidGrant,
					"redirect_uri does not match the authorization request"},
				check{resource != g.Resource, oauth.ErrCodeInvalidTarget, "resource does not match the authorization request"},
				check{!oauth.VerifyS256(verifier, g.CodeChallenge), oauth.ErrCodeInvalidGrant,
					"code_verifier does not match the code challenge"},
			); oe != nil {
				return oe
			}
			return nil
		},
	})
}

// rotateRefresh runs the refresh_token grant. An optional scope may only
// narrow the new access token; resource, if sent, must be ours.
func rotateRefresh(r *http.Request, cfg *Config, st *store.DB, c store.Client, form oauth.Form,
	access, refresh string) (store.Issued, error) {
	rt, scope := form.Get("refresh_token"), form.Get("scope")
	_, resourceOK := canonicalResource(cfg, form.Get("resource"))
	scopes, scopeErr := oauth.ParseScope(scope) // "" gives no scopes: keep the grant's
	if oe := firstFailed(
		check{!c.HasGrantType("refresh_token"), oauth.ErrCodeUnauthorizedClient,
			"the client did not register the refresh_token grant"},
		check{rt == "", oauth.ErrCodeInvalidRequest, "refresh_token is required"},
		check{!resourceOK, oauth.ErrCodeInvalidTarget, "resource must be " + cfg.resource()},
		check{scope != "" && (scopeErr != nil || len(scopes) == 0), oauth.ErrCodeInvalidScope, "unknown scope"},
		check{!cfg.Secrets.Valid(rt, oauth.PrefixRefresh, cfg.Now()), oauth.ErrCodeInvalidGrant, "invalid refresh token"},
	); oe != nil {
		return store.Issued{}, oe
	}
	return st.RotateRefresh(r.Context(), store.Rotation{
		RefreshHash: oauth.Hash(rt), ClientID: c.ID, Scopes: scopes, Now: cfg.Now(),
		Tokens: store.NewTokens{AccessHash: oauth.Hash(access), AccessTTL: AccessTTL, RefreshHash: oauth.Hash(refresh)},
	})
}

// writeTokenError maps a refusal to an RFC 6749 §5.2 error body. The
// store's reason goes on the access-log line (it names no secret), never
// into the answer.
func writeTokenError(w http.ResponseWriter, r *http.Request, logger *slog.Logger, err error) {
	var oe *oauth.Error
	var refusal *store.RefusedError
	code, desc, status := oauth.ErrCodeServerError, "internal error", http.StatusInternalServerError
	switch {
	case errors.As(err, &oe):
		code, desc, status = oe.Code, oe.Description, http.StatusBadRequest
	case errors.Is(err, store.ErrScopeExceeded):
		code, desc, status = oauth.ErrCodeInvalidScope, "a refresh cannot add a scope", http.StatusBadRequest
	case errors.Is(err, store.ErrInvalidGrant):
		code, desc, status = oauth.ErrCodeInvalidGrant, "the code or refresh token is invalid, expired, revoked or already used", http.StatusBadRequest
	case errors.Is(err, store.ErrUnavailable), errors.Is(err, store.ErrConflict):
		code, desc, status = oauth.ErrCodeTemporarilyUnavailable, "retry later", http.StatusServiceUnavailable
	}
	web.AddLog(r.Context(), slog.String("code", code))
	if status >= 500 {
		logger.ErrorContext(r.Context(), "token request failed", "req_id", web.RequestID(r.Context()), "err", err)
	} else if errors.As(err, &refusal) && refusal.Msg != "" {
		// On the request's one access-log line, so that a refusal is one
		// event (LG-03); the store's reasons are fixed text, never secrets.
		web.AddLog(r.Context(), slog.String("reason", refusal.Msg))
	}
	writeOAuthError(w, status, code, desc)
}

// clientKey is what the store finds a presented client_id by: its row id,
// or a listed metadata URL as it is. ok is false, with no lookup, for a
// client_id this server never assigned (its MAC does not verify) and a
// metadata URL the operator did not list.
func clientKey(cfg *Config, id string) (string, bool) {
	if oauth.IsClientIDURL(id) {
		return id, cfg.CIMD.listed(id)
	}
	return cfg.Secrets.ClientRow(id)
}

// HandleRevoke serves POST /oauth/revoke (RFC 7009) for public clients. A
// refresh token takes its whole family with it; an access token goes alone.
// An unknown token, or one issued to another client, gets the same 200 as
// a revoked one (RFC 7009 §2.2), so the endpoint is no oracle. If the store
// cannot answer, the answer is 503, never a 200 that would claim a
// revocation that did not happen (CVE-2020-15223).
func HandleRevoke(logger *slog.Logger, cfg *Config, st *store.DB) http.Handler {
	return withOAuthCORS(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		form, err := readForm(w, r)
		if err != nil {
			writeOAuthError(w, http.StatusBadRequest, oauth.ErrCodeInvalidRequest, err.Error())
			return
		}
		lookup, oerr, status := tokenClient(r, cfg, st, form)
		if oerr != nil {
			writeClientError(w, r, logger, oerr, status)
			return
		}
		tok := form.Get("token")
		if tok == "" {
			writeOAuthError(w, http.StatusBadRequest, oauth.ErrCodeInvalidRequest, "token is required")
			return
		}
		// The hint is optional and never trusted: the stored kind decides. A
		// token this server never minted is unknown: 200, with no lookup of
		// it or of the client.
		if now := cfg.Now(); cfg.Secrets.Valid(tok, oauth.PrefixAccess, now) || cfg.Secrets.Valid(tok, oauth.PrefixRefresh, now) {
			client, oerr, status := lookup()
			if oerr != nil {
				writeClientError(w, r, logger, oerr, status)
				return
			}
			web.AddLog(r.Context(), slog.String("client_id", client.ID))
			if _, err := st.RevokeClientToken(r.Context(), oauth.Hash(tok), client.ID, cfg.Now()); err != nil {
				logger.ErrorContext(r.Context(), "revocation failed", "req_id", web.RequestID(r.Context()), "err", err)
				writeOAuthError(w, http.StatusServiceUnavailable, oauth.ErrCodeTemporarilyUnavailable, "retry later")
				return
			}
		}
		web.AddLog(r.Context(), slog.String("code", "ok"))
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusOK)
	}))
}
