package authserver

import (
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"slices"

	"heyaira/oauth"
	"heyaira/server/internal/web"
	"heyaira/store"
)

// consentFields are the only fields the consent form has. Anything else
// (a principal_id, a redirect_uri, a client_id) is tampering.
var consentFields = []string{"request", "csrf", "decision", "project", "scope"}

// HandleConsent serves POST /oauth/authorize: the principal's answer, a 303
// to the client's redirect URI.
//
// Check order: form → session → CSRF token (an HMAC of the request handle
// under the session secret, so a token from another session or request
// fails) → decision. Nothing on the form is trusted: client, redirect URI,
// PKCE challenge, resource and state come from the stored request, bound to
// this session; the principal from the session; the project must be the
// principal's and the scopes among those requested. The step-up page's
// approve_documents (documents:read included: the button names it) and
// deny_documents are approve and deny with their own wording
// (docs/oauth.md, "Step-up").
func HandleConsent(logger *slog.Logger, cfg *Config, st *store.DB) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		form, err := readForm(w, r, "scope")
		if err != nil {
			writeMessage(w, http.StatusBadRequest, "Invalid form", "The consent form could not be read.")
			return
		}
		sessTok, sess, ok, err := currentSession(r, cfg, st)
		if err != nil {
			unavailable(w, r, logger, "session lookup failed", err)
			return
		}
		if !ok {
			writeMessage(w, http.StatusForbidden, "Not signed in",
				"Your sign-in has expired. Start again from your application.")
			return
		}
		web.AddLog(r.Context(), slog.String("principal", store.ActorPrincipal(sess.PrincipalID)))
		refuse := func(status int, outcome, title, msg string) {
			web.AddLog(r.Context(), slog.String("code", outcome))
			// Refused consent posts are audited: they are how tampering shows.
			if err := st.Audit(r.Context(), store.AuditEvent{Actor: store.ActorPrincipal(sess.PrincipalID),
				Action: "oauth_consent.refused", AccountID: sess.AccountID, Outcome: outcome}); err != nil {
				logger.WarnContext(r.Context(), "audit failed", "req_id", web.RequestID(r.Context()), "err", err)
			}
			writeMessage(w, status, title, msg)
		}
		handle := form.Get("request")
		if !cfg.Secrets.Valid(handle, oauth.PrefixRequest, cfg.Now()) ||
			!oauth.Equal(form.Get("csrf"), oauth.MAC(sessTok, labelConsentCSRF, handle)) {
			refuse(http.StatusForbidden, "csrf_invalid", "Invalid form",
				"This consent form was not issued to this browser session. Start again from your application.")
			return
		}
		if k := form.Unknown(consentFields...); k != "" {
			refuse(http.StatusBadRequest, "form_tampered", "Invalid form", "The consent form has a field it never had.")
			return
		}
		decision := form.Get("decision")
		switch decision {
		case "deny", "deny_documents":
			desc := "the user denied the request"
			if decision == "deny_documents" {
				desc = "the user kept document reading off: documents:read is not granted; do not ask again unless the user asks"
			}
			ans, err := st.DenyAuthRequest(r.Context(), requestHash(sessTok, handle), sess.PrincipalID, cfg.Now())
			if err != nil {
				consentStoreError(w, r, logger, err)
				return
			}
			web.AddLog(r.Context(), slog.String("client_id", ans.ClientID), slog.String("code", oauth.ErrCodeAccessDenied))
			redirect303(w, clientRedirect(cfg, ans.RedirectURI, url.Values{"error": {oauth.ErrCodeAccessDenied},
				"error_description": {desc}}, ans.State))
		case "approve", "approve_documents":
			scopes := form.All("scope")
			if decision == "approve_documents" && !slices.Contains(scopes, oauth.DocumentsRead) {
				// Pressing the button that names document reading is the
				// explicit approval of documents:read.
				scopes = append(scopes, oauth.DocumentsRead)
			}
			if len(scopes) == 0 {
				writeMessage(w, http.StatusBadRequest, "Nothing approved",
					"Tick at least one permission and approve, or deny the request. Go back to change your answer.")
				return
			}
			if len(oauth.Canonical(scopes)) != len(scopes) {
				refuse(http.StatusBadRequest, "scope_tampered", "Invalid form", "The form names an unknown or repeated permission.")
				return
			}
			if !isMember(r, st, sess.PrincipalID, form.Get("project")) {
				refuse(http.StatusForbidden, "project_not_member", "Invalid project", "You are not a member of that project.")
				return
			}
			code := cfg.Secrets.Mint(oauth.PrefixCode, cfg.Now().Add(CodeTTL))
			ans, err := st.ApproveAuthRequest(r.Context(), store.Approval{
				HandleHash: requestHash(sessTok, handle), PrincipalID: sess.PrincipalID,
				ProjectID: form.Get("project"), Scopes: oauth.Canonical(scopes),
				CodeHash: oauth.Hash(code), Now: cfg.Now(), CodeTTL: CodeTTL,
			})
			if errors.Is(err, store.ErrScopeExceeded) {
				refuse(http.StatusBadRequest, "scope_tampered", "Invalid form", "The form approves a permission that was not requested.")
				return
			}
			if err != nil {
				consentStoreError(w, r, logger, err)
				return
			}
			web.AddLog(r.Context(), slog.String("client_id", ans.ClientID), slog.String("project", ans.ProjectID),
				slog.String("code", "ok"))
			redirect303(w, clientRedirect(cfg, ans.RedirectURI, url.Values{"code": {code}}, ans.State))
		default:
			writeMessage(w, http.StatusBadRequest, "Invalid form", "Choose Approve or Deny.")
		}
	})
}

// isMember reports whether the principal is a member of the project. The
// approval transaction checks it again under a lock; this early check only
// gives the tampered form its own answer.
func isMember(r *http.Request, st *store.DB, principalID, projectID string) bool {
	projects, err := st.PrincipalProjects(r.Context(), principalID)
	// On a store error, let the transaction decide.
	return err != nil || slices.ContainsFunc(projects, func(p store.Project) bool { return p.ID == projectID })
}

func consentStoreError(w http.ResponseWriter, r *http.Request, logger *slog.Logger, err error) {
	if errors.Is(err, store.ErrNotFound) {
		writeMessage(w, http.StatusBadRequest, "Request expired",
			"This authorization request has expired or was already answered. Start again from your application.")
		return
	}
	unavailable(w, r, logger, "consent failed", err)
}
