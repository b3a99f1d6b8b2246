package server

import (
	"log/slog"
	"net/http"

	"heyaira/oauth"
	"heyaira/store"
)

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
