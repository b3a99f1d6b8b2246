package server

import (
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

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
// and refresh_token (rotating). Every response, success or error, carries
// Cache-Control: no-store.
//
// Check order: form → client (public: client_id in the body, or HTTP Basic
// with an empty password) → grant type → request syntax → the store's
// single-use transaction, in which the code's bindings and PKCE are checked.
func handleToken(logger *slog.Logger, cfg *Config, st *store.DB, failures *rateLimiter) http.Handler {
	return withOAuthCORS(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fw := &failureWriter{statusWriter: statusWriter{ResponseWriter: w}, key: failureKey(remoteIP(r), "")}
		defer fw.charge(failures, cfg.Now)
		w = fw
		form, err := readForm(w, r)
		if err != nil {
			if !fw.throttled(r, failures, cfg.Now) {
				writeOAuthError(w, http.StatusBadRequest, oauth.ErrCodeInvalidRequest, err.Error())
			}
			return
		}
		client, oerr, status := tokenClient(r, st, form)
		if oerr != nil {
			if fw.throttled(r, failures, cfg.Now) {
				return
			}
			if status == http.StatusUnauthorized && r.Header.Get("Authorization") != "" {
				w.Header().Set("WWW-Authenticate", `Basic realm="heyaira"`)
			}
			if status == http.StatusServiceUnavailable {
				logger.WarnContext(r.Context(), "client lookup failed", "req_id", requestID(r.Context()))
			}
			addLog(r.Context(), slog.String("code", oerr.Code))
			writeOAuthError(w, status, oerr.Code, oerr.Description)
			return
		}
		addLog(r.Context(), slog.String("client_id", client.ID))
		fw.key = failureKey(remoteIP(r), client.ID)
		if fw.throttled(r, failures, cfg.Now) {
			return
		}
		var iss store.Issued
		var access, refresh string
		switch form.Get("grant_type") {
		case "authorization_code":
			iss, access, refresh, err = redeemCode(r, cfg, st, client, form)
		case "refresh_token":
			iss, access, refresh, err = rotateRefresh(r, cfg, st, client, form)
		case "":
			err = oauth.NewError(oauth.ErrCodeInvalidRequest, "grant_type is required")
		default:
			err = oauth.NewError(oauth.ErrCodeUnsupportedGrantType, "supported: authorization_code, refresh_token")
		}
		if err != nil {
			writeTokenError(w, r, logger, err)
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

// Refused token requests are limited per client address and client (LD-04,
// TP-01): a client that keeps presenting bad codes or refresh tokens gets
// 429 before any grant work, once it has spent the burst. Requests whose
// client is not known (a malformed form, a made-up client_id) share one
// bucket per address, so they cannot empty a registered client's bucket
// even from the same address (a proxy, a NAT, a hosted runtime's egress).
// Successful requests cost nothing, so honest clients never meet the
// limit. Guessing a 256-bit secret is hopeless anyway; the limit bounds
// the load a stream of garbage can put on the database, which is one
// primary-key lookup of the client per request once throttled.
const (
	tokenFailureRate  = 1.0 // refusals per second, per bucket, after the burst
	tokenFailureBurst = 60
)

func newTokenFailureLimiter() *rateLimiter {
	return newRateLimiter(tokenFailureRate, tokenFailureBurst)
}

// failureKey names a failure bucket: the client address, and the client
// once it is known ("" before). The client id is hashed so that a made-up
// one of any length costs a fixed-size key.
func failureKey(addr, clientID string) string {
	if clientID == "" {
		return addr
	}
	h := sha256.Sum256([]byte(clientID))
	return addr + " " + base64.RawURLEncoding.EncodeToString(h[:16])
}

// failureWriter charges its bucket when the response is a 400 or 401.
type failureWriter struct {
	statusWriter
	key string
}

// throttled answers 429 and reports true when the bucket is empty.
func (fw *failureWriter) throttled(r *http.Request, failures *rateLimiter, now func() time.Time) bool {
	wait, ok := failures.peek(fw.key, now())
	if ok {
		return false
	}
	addLog(r.Context(), slog.String("code", "rate_limited"))
	fw.Header().Set("Retry-After", strconv.Itoa(int(wait.Seconds())+1))
	writeOAuthError(fw, http.StatusTooManyRequests, oauth.ErrCodeTemporarilyUnavailable, "too many refused token requests; retry later")
	return true
}

func (fw *failureWriter) charge(failures *rateLimiter, now func() time.Time) {
	if fw.status == http.StatusBadRequest || fw.status == http.StatusUnauthorized {
		failures.allow(fw.key, now())
	}
}

// tokenClient authenticates a public client: it names itself by client_id
// in the body or as the user of HTTP Basic with an empty password (which
// golang.org/x/oauth2 tries first). A client secret is refused: none was
// ever issued.
func tokenClient(r *http.Request, st *store.DB, form oauth.Form) (store.Client, *oauth.Error, int) {
	id := form.Get("client_id")
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, cred, _ := strings.Cut(h, " ")
		raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(cred))
		user, pass, ok := strings.Cut(string(raw), ":")
		if !strings.EqualFold(scheme, "Basic") || err != nil || !ok {
			return store.Client{}, oauth.NewError(oauth.ErrCodeInvalidClient, "malformed client authentication"), http.StatusUnauthorized
		}
		if user, err = url.QueryUnescape(user); err != nil || pass != "" {
			return store.Client{}, oauth.NewError(oauth.ErrCodeInvalidClient, "this server has public clients only: no client secret"), http.StatusUnauthorized
		}
		if id != "" && id != user {
			return store.Client{}, oauth.NewError(oauth.ErrCodeInvalidRequest, "two different client ids"), http.StatusBadRequest
		}
		id = user
	}
	if form.Has("client_secret") {
		return store.Client{}, oauth.NewError(oauth.ErrCodeInvalidClient, "this server has public clients only: no client secret"), http.StatusUnauthorized
	}
	if id == "" {
		return store.Client{}, oauth.NewError(oauth.ErrCodeInvalidClient, "client_id is required"), http.StatusUnauthorized
	}
	c, err := st.Client(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) {
		return store.Client{}, oauth.NewError(oauth.ErrCodeInvalidClient, "unknown client"), http.StatusUnauthorized
	}
	if err != nil {
		return store.Client{}, oauth.NewError(oauth.ErrCodeTemporarilyUnavailable, "retry later"), http.StatusServiceUnavailable
	}
	return c, nil, 0
}

// redeemCode runs the authorization_code grant. Request syntax is checked
// before the code is touched; the code's own bindings (client, expiry,
// redirect URI, resource, PKCE) inside the store's transaction, after the
// code is consumed: a code dies on its first failed redemption.
func redeemCode(r *http.Request, cfg *Config, st *store.DB, c store.Client, form oauth.Form) (store.Issued, string, string, error) {
	code, verifier := form.Get("code"), form.Get("code_verifier")
	if code == "" {
		return store.Issued{}, "", "", oauth.NewError(oauth.ErrCodeInvalidRequest, "code is required")
	}
	if verifier == "" {
		return store.Issued{}, "", "", oauth.NewError(oauth.ErrCodeInvalidRequest, "code_verifier is required (PKCE)")
	}
	resource, ok := canonicalResource(cfg, form.Get("resource"))
	if !ok {
		return store.Issued{}, "", "", oauth.NewError(oauth.ErrCodeInvalidTarget, "resource must be "+cfg.resource())
	}
	if !oauth.WellFormedSecret(code, oauth.PrefixCode) {
		return store.Issued{}, "", "", oauth.NewError(oauth.ErrCodeInvalidGrant, "invalid authorization code")
	}
	redirectURI := form.Get("redirect_uri")
	access, refresh := oauth.NewSecret(oauth.PrefixAccess), oauth.NewSecret(oauth.PrefixRefresh)
	tokens := store.NewTokens{AccessHash: oauth.Hash(access), AccessTTL: accessTTL, RefreshTTL: refreshFamilyTTL}
	if c.HasGrantType("refresh_token") {
		tokens.RefreshHash = oauth.Hash(refresh)
	}
	iss, err := st.RedeemCode(r.Context(), store.CodeRedemption{
		CodeHash: oauth.Hash(code), ClientID: c.ID, Now: cfg.Now(), Tokens: tokens,
		Check: func(g store.CodeGrant) error {
			// redirect_uri is compared exactly with the one the code was
			// issued for. It is required when the authorization request
			// carried one (RFC 6749 §4.1.3); a client that sent none there,
			// relying on its one registered URI, may omit it here too.
			if g.RedirectURISent && redirectURI == "" {
				return oauth.NewError(oauth.ErrCodeInvalidGrant, "redirect_uri is required: the authorization request had one")
			}
			if redirectURI != "" && redirectURI != g.RedirectURI {
				return oauth.NewError(oauth.ErrCodeInvalidGrant, "redirect_uri does not match the authorization request")
			}
			if resource != g.Resource {
				return oauth.NewError(oauth.ErrCodeInvalidTarget, "resource does not match the authorization request")
			}
			if !oauth.VerifyS256(verifier, g.CodeChallenge) {
				return oauth.NewError(oauth.ErrCodeInvalidGrant, "code_verifier does not match the code challenge")
			}
			return nil
		},
	})
	return iss, access, refresh, err
}

// rotateRefresh runs the refresh_token grant. An optional scope may only
// narrow the new access token; resource, if sent, must be ours.
func rotateRefresh(r *http.Request, cfg *Config, st *store.DB, c store.Client, form oauth.Form) (store.Issued, string, string, error) {
	if !c.HasGrantType("refresh_token") {
		return store.Issued{}, "", "", oauth.NewError(oauth.ErrCodeUnauthorizedClient, "the client did not register the refresh_token grant")
	}
	rt := form.Get("refresh_token")
	if rt == "" {
		return store.Issued{}, "", "", oauth.NewError(oauth.ErrCodeInvalidRequest, "refresh_token is required")
	}
	if _, ok := canonicalResource(cfg, form.Get("resource")); !ok {
		return store.Issued{}, "", "", oauth.NewError(oauth.ErrCodeInvalidTarget, "resource must be "+cfg.resource())
	}
	var scopes []string
	if s := form.Get("scope"); s != "" {
		var err error
		if scopes, err = oauth.ParseScope(s); err != nil || len(scopes) == 0 {
			return store.Issued{}, "", "", oauth.NewError(oauth.ErrCodeInvalidScope, "unknown scope")
		}
	}
	if !oauth.WellFormedSecret(rt, oauth.PrefixRefresh) {
		return store.Issued{}, "", "", oauth.NewError(oauth.ErrCodeInvalidGrant, "invalid refresh token")
	}
	access, refresh := oauth.NewSecret(oauth.PrefixAccess), oauth.NewSecret(oauth.PrefixRefresh)
	iss, err := st.RotateRefresh(r.Context(), store.Rotation{
		RefreshHash: oauth.Hash(rt), ClientID: c.ID, Scopes: scopes, Now: cfg.Now(),
		Tokens: store.NewTokens{AccessHash: oauth.Hash(access), AccessTTL: accessTTL, RefreshHash: oauth.Hash(refresh)},
	})
	return iss, access, refresh, err
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
	reason := ""
	if errors.As(err, &refusal) {
		reason = refusal.Msg
	}
	addLog(r.Context(), slog.String("code", code))
	if status >= 500 {
		logger.ErrorContext(r.Context(), "token request failed", "req_id", requestID(r.Context()), "err", err)
	} else if reason != "" {
		// On the request's one access-log line, so that a refusal is one
		// event (LG-03); the store's reasons are fixed text, never secrets.
		addLog(r.Context(), slog.String("reason", reason))
	}
	writeOAuthError(w, status, code, desc)
}
