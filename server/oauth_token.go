package server

import (
	"encoding/base64"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"heyaira/oauth"
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

// handleToken serves POST /oauth/token: authorization_code (PKCE S256 only)
// and refresh_token (rotating).
//
// Check order: form → client (public: client_id in the body, or HTTP Basic
// with an empty password) → grant type → request syntax → the store's
// single-use transaction, in which the code's bindings and PKCE are checked.
func handleToken(logger *slog.Logger, cfg *Config, st *store.DB, refusals *refusalGate) http.Handler {
	return withOAuthCORS(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The body is read before the gate, as at /mcp: a slot of a spent
		// network is held for one lookup, never while a client trickles its
		// body in (until ReadTimeout) in front of that network's valid grants.
		form, formErr := readForm(w, r)
		pass, err := refusals.enter(r.Context(), clientNetwork(r), nil)
		if err != nil {
			writeOAuthError(w, http.StatusServiceUnavailable, oauth.ErrCodeTemporarilyUnavailable, "retry later")
			return
		}
		defer pass.leave()
		tr := &tokenRefusal{pass: pass}
		if formErr != nil {
			if !tr.throttled(w, r, http.StatusBadRequest) {
				writeOAuthError(w, http.StatusBadRequest, oauth.ErrCodeInvalidRequest, formErr.Error())
			}
			return
		}
		tr.credential = presentedGrant(form)
		client, oerr, status := tokenClient(r, st, form)
		if oerr != nil {
			if !tr.throttled(w, r, status) {
				writeClientError(w, r, logger, oerr, status)
			}
			return
		}
		addLog(r.Context(), slog.String("client_id", client.ID))
		var iss store.Issued
		access, refresh := oauth.NewSecret(oauth.PrefixAccess), oauth.NewSecret(oauth.PrefixRefresh)
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
			writeTokenError(w, r, logger, tr, err)
			return
		}
		addLog(r.Context(), slog.String("project", iss.ProjectID), slog.String("code", "ok"))
		resp := tokenResponse{AccessToken: access, TokenType: "Bearer", ExpiresIn: int64(accessTTL.Seconds()),
			Scope: oauth.Format(iss.Scopes)}
		if iss.Refresh {
			resp.RefreshToken = refresh
		}
		writeOAuthJSON(w, http.StatusOK, resp)
	}))
}

// tokenRefusal charges a refused token request through the gate
// (refusals.go): a made-up code or refresh token, or none, to the caller's
// network; one the server issued (used, rotated, expired, revoked) to that
// secret alone. A spent bucket turns the refusal into 429
// temporarily_unavailable (an RFC 6749 code OAuth libraries know) with
// Retry-After. A valid grant is served whatever the buckets hold: guessing
// a 256-bit secret is hopeless, the limit bounds the database load of a
// stream of garbage.
type tokenRefusal struct {
	pass       *passage
	credential []byte // SHA-256 of the well-formed code or refresh token presented, or nil
}

// presentedGrant is the hash of the grant's secret, when it is well formed.
func presentedGrant(form oauth.Form) []byte {
	switch form.Get("grant_type") {
	case "authorization_code":
		if c := form.Get("code"); oauth.WellFormedSecret(c, oauth.PrefixCode) {
			return oauth.Hash(c)
		}
	case "refresh_token":
		if t := form.Get("refresh_token"); oauth.WellFormedSecret(t, oauth.PrefixRefresh) {
			return oauth.Hash(t)
		}
	}
	return nil
}

// throttled charges a refusal with status (400 and 401 only) and, when its
// bucket is spent, answers 429 and reports true.
func (tr *tokenRefusal) throttled(w http.ResponseWriter, r *http.Request, status int) bool {
	if status != http.StatusBadRequest && status != http.StatusUnauthorized {
		return false
	}
	throttle, wait := tr.pass.refused(r.Context(), tr.credential, false)
	if !throttle {
		return false
	}
	addLog(r.Context(), slog.String("code", "rate_limited"))
	w.Header().Set("Retry-After", strconv.Itoa(int(wait.Seconds())+1))
	writeOAuthError(w, http.StatusTooManyRequests, oauth.ErrCodeTemporarilyUnavailable, "too many refused token requests; retry later")
	return true
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
		logger.WarnContext(r.Context(), "client lookup failed", "req_id", requestID(r.Context()))
	}
	addLog(r.Context(), slog.String("code", oerr.Code))
	writeOAuthError(w, status, oerr.Code, oerr.Description)
}

// tokenClient authenticates a public client: it names itself by client_id
// in the body or as the user of HTTP Basic with an empty password (which
// golang.org/x/oauth2 tries first). A client secret is refused: none was
// ever issued.
func tokenClient(r *http.Request, st *store.DB, form oauth.Form) (store.Client, *oauth.Error, int) {
	refuse := func(code, desc string, status int) (store.Client, *oauth.Error, int) {
		return store.Client{}, oauth.NewError(code, desc), status
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
	c, err := st.Client(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) {
		return refuse(oauth.ErrCodeInvalidClient, "unknown client", http.StatusUnauthorized)
	}
	if err != nil {
		return refuse(oauth.ErrCodeTemporarilyUnavailable, "retry later", http.StatusServiceUnavailable)
	}
	return c, nil, 0
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
		check{!oauth.WellFormedSecret(code, oauth.PrefixCode), oauth.ErrCodeInvalidGrant, "invalid authorization code"},
	); oe != nil {
		return store.Issued{}, oe
	}
	redirectURI := form.Get("redirect_uri")
	tokens := store.NewTokens{AccessHash: oauth.Hash(access), AccessTTL: accessTTL, RefreshTTL: refreshFamilyTTL}
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
		check{!oauth.WellFormedSecret(rt, oauth.PrefixRefresh), oauth.ErrCodeInvalidGrant, "invalid refresh token"},
	); oe != nil {
		return store.Issued{}, oe
	}
	return st.RotateRefresh(r.Context(), store.Rotation{
		RefreshHash: oauth.Hash(rt), ClientID: c.ID, Scopes: scopes, Now: cfg.Now(),
		Tokens: store.NewTokens{AccessHash: oauth.Hash(access), AccessTTL: accessTTL, RefreshHash: oauth.Hash(refresh)},
	})
}

// writeTokenError maps a refusal to an RFC 6749 §5.2 error body. The
// store's reason goes on the access-log line (it names no secret), never
// into the answer.
func writeTokenError(w http.ResponseWriter, r *http.Request, logger *slog.Logger, tr *tokenRefusal, err error) {
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
	if tr.throttled(w, r, status) {
		return
	}
	addLog(r.Context(), slog.String("code", code))
	if status >= 500 {
		logger.ErrorContext(r.Context(), "token request failed", "req_id", requestID(r.Context()), "err", err)
	} else if errors.As(err, &refusal) && refusal.Msg != "" {
		// On the request's one access-log line, so that a refusal is one
		// event (LG-03); the store's reasons are fixed text, never secrets.
		addLog(r.Context(), slog.String("reason", refusal.Msg))
	}
	writeOAuthError(w, status, code, desc)
}

// handleRevoke serves POST /oauth/revoke (RFC 7009) for public clients. A
// refresh token takes its whole family with it; an access token goes alone.
// An unknown token, or one issued to another client, gets the same 200 as
// a revoked one (RFC 7009 §2.2), so the endpoint is no oracle. If the store
// cannot answer, the answer is 503, never a 200 that would claim a
// revocation that did not happen (CVE-2020-15223).
func handleRevoke(logger *slog.Logger, cfg *Config, st *store.DB) http.Handler {
	return withOAuthCORS(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		form, err := readForm(w, r)
		if err != nil {
			writeOAuthError(w, http.StatusBadRequest, oauth.ErrCodeInvalidRequest, err.Error())
			return
		}
		client, oerr, status := tokenClient(r, st, form)
		if oerr != nil {
			writeClientError(w, r, logger, oerr, status)
			return
		}
		addLog(r.Context(), slog.String("client_id", client.ID))
		tok := form.Get("token")
		if tok == "" {
			writeOAuthError(w, http.StatusBadRequest, oauth.ErrCodeInvalidRequest, "token is required")
			return
		}
		// The hint is optional and never trusted: the stored kind decides.
		if oauth.WellFormedSecret(tok, oauth.PrefixAccess) || oauth.WellFormedSecret(tok, oauth.PrefixRefresh) {
			if _, err := st.RevokeClientToken(r.Context(), oauth.Hash(tok), client.ID, cfg.Now()); err != nil {
				logger.ErrorContext(r.Context(), "revocation failed", "req_id", requestID(r.Context()), "err", err)
				writeOAuthError(w, http.StatusServiceUnavailable, oauth.ErrCodeTemporarilyUnavailable, "retry later")
				return
			}
		}
		addLog(r.Context(), slog.String("code", "ok"))
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusOK)
	}))
}
