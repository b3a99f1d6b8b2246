package authserver

import (
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"heyaira/oauth"
	"heyaira/server/internal/web"
	"heyaira/store"
)

// HandleAuthorize serves GET /oauth/authorize (RFC 6749 §4.1.1 with PKCE).
//
// Check order: the client and redirect URI first; until both are valid,
// every error is a 400 page with no Location header, so the endpoint never
// redirects to an unregistered URI (RFC 9700 §4.11.2). After that an error
// is a 400 page naming the client and its redirect host, with the error
// redirect (error, state, iss) as a link: nothing redirects before the user
// has acted, because anyone can register a client (no open redirect). Then
// the browser must have a session (else it signs in and comes back); then
// the request is stored server-side and the consent page shown. Nothing is
// granted on a GET.
func HandleAuthorize(logger *slog.Logger, cfg *Config, st *store.DB) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q, err := oauth.ParseForm(r.URL.RawQuery)
		if err != nil {
			writeMessage(w, http.StatusBadRequest, "Invalid authorization request",
				"The request is malformed (a parameter is repeated or badly encoded). Start again from your application.")
			return
		}
		client, redirectURI, ok := authorizeClient(w, r, logger, cfg, st, q)
		if !ok {
			return
		}
		web.AddLog(r.Context(), slog.String("client_id", client.ID))
		state := q.Get("state")
		if len(state) > maxState {
			writeMessage(w, http.StatusBadRequest, "Invalid authorization request", "The state parameter is too long.")
			return
		}
		// A NUL or invalid UTF-8 cannot be stored, and no client sends a
		// control character in state (RFC 6749 Appendix A.5 allows printable
		// ASCII; other printable UTF-8 is kept and returned as sent).
		if !utf8.ValidString(state) || strings.ContainsFunc(state, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			writeMessage(w, http.StatusBadRequest, "Invalid authorization request",
				"The state parameter holds a control character or is not valid UTF-8.")
			return
		}
		rt, challenge := q.Get("response_type"), q.Get("code_challenge")
		scopes, scopeErr := oauth.ParseRequestedScope(q.Get("scope"))
		resource, resourceOK := canonicalResource(cfg, q.Get("resource"))
		if oe := firstFailed(
			check{rt == "", oauth.ErrCodeInvalidRequest, "response_type is required"},
			check{rt != "code", oauth.ErrCodeUnsupportedResponseType, "only response_type=code is supported"},
			check{q.Get("code_challenge_method") != oauth.MethodS256, oauth.ErrCodeInvalidRequest,
				"PKCE is required with code_challenge_method=S256"},
			check{!oauth.ValidChallenge(challenge), oauth.ErrCodeInvalidRequest,
				"code_challenge must be 43 base64url characters (S256)"},
			check{scopeErr != nil, oauth.ErrCodeInvalidScope, "the scope names no scope this server supports"},
			check{!resourceOK, oauth.ErrCodeInvalidTarget, "resource must be " + cfg.resource()},
		); oe != nil {
			web.AddLog(r.Context(), slog.String("code", oe.Code))
			writePage(w, http.StatusBadRequest, oauth.AuthorizeErrorPage{
				ClientID: q.Get("client_id"), ClientName: client.Name, RedirectURI: redirectURI,
				RedirectHost: oauth.RedirectHost(redirectURI), Reason: oe.Description,
				Link: clientRedirect(cfg, redirectURI, url.Values{"error": {oe.Code}, "error_description": {oe.Description}}, state),
			}.Render)
			return
		}

		sessTok, sess, ok, err := currentSession(r, cfg, st)
		if err != nil {
			unavailable(w, r, logger, "session lookup failed", err)
			return
		}
		if !ok {
			// The browser comes back to this very URL after sign-in.
			if uri := r.URL.RequestURI(); len(uri) <= maxPendingURI {
				setCookie(w, cfg, CookiePending, PendingValue(uri), pendingTTL)
			}
			redirect303(w, "/signin")
			return
		}
		web.AddLog(r.Context(), slog.String("principal", store.ActorPrincipal(sess.PrincipalID)))
		projects, err := st.PrincipalProjects(r.Context(), sess.PrincipalID)
		if err != nil {
			unavailable(w, r, logger, "project lookup failed", err)
			return
		}
		if len(projects) == 0 {
			writeMessage(w, http.StatusForbidden, "No project",
				"You are not a member of any project, so there is nothing to authorize. Ask your administrator to add you.")
			return
		}
		grants, err := st.ClientGrants(r.Context(), client.ID, sess.PrincipalID)
		if err != nil {
			unavailable(w, r, logger, "grant lookup failed", err)
			return
		}
		more, projects := StepUp(projects, grants, scopes)
		handle := cfg.Secrets.Mint(oauth.PrefixRequest, cfg.Now().Add(RequestTTL))
		err = st.CreateAuthRequest(r.Context(), requestHash(sessTok, handle), store.AuthRequest{
			ClientID: client.ID, RedirectURI: redirectURI, RedirectURISent: q.Get("redirect_uri") != "",
			CodeChallenge: challenge, Scopes: scopes,
			Resource: resource, State: state, ExpiresAt: cfg.Now().Add(RequestTTL),
			PrincipalID: sess.PrincipalID, Now: cfg.Now(),
		})
		if errors.Is(err, store.ErrQuotaExceeded) {
			writeTooManyRequestsPage(w)
			return
		}
		if err != nil {
			unavailable(w, r, logger, "storing authorization request failed", err)
			return
		}
		ordinary, documents := oauth.NewScopeChoices(scopes)
		page := oauth.ConsentPage{
			Action: oauth.PathAuthorize, ClientID: client.ID, ClientName: client.Name, Principal: sess.PrincipalName,
			RedirectURI: redirectURI, RedirectHost: oauth.RedirectHost(redirectURI),
			Loopback: oauth.IsLoopbackRedirect(redirectURI), Scopes: ordinary, Documents: documents,
			Request: handle, CSRF: oauth.MAC(sessTok, labelConsentCSRF, handle), StepUp: more,
		}
		page.ClientID = q.Get("client_id") // as the client named itself
		cimdConsent(&page, cfg, q.Get("client_id"), client)
		if page.ClientName == "" {
			page.ClientName = "an unnamed application"
		}
		for _, p := range projects {
			page.Projects = append(page.Projects, oauth.ProjectChoice{ID: p.ID, Name: p.Name, Checked: len(projects) == 1})
		}
		writePage(w, http.StatusOK, page.Render)
	})
}

// authorizeClient validates client_id and redirect_uri. On failure it
// writes a 400 page (never a redirect) and returns ok=false. A missing
// redirect_uri is allowed only when the client registered exactly one
// (OAuth 2.1 §4.1.1).
func authorizeClient(w http.ResponseWriter, r *http.Request, logger *slog.Logger, cfg *Config, st *store.DB, q oauth.Form) (store.Client, string, bool) {
	invalid := func(msg string) (store.Client, string, bool) {
		web.AddLog(r.Context(), slog.String("code", "invalid_client_or_redirect"))
		writeMessage(w, http.StatusBadRequest, "Invalid authorization request", msg)
		return store.Client{}, "", false
	}
	id := q.Get("client_id")
	if id == "" {
		return invalid("The request names no client.")
	}
	var c store.Client
	var err error
	switch {
	case !oauth.IsClientIDURL(id):
		err = store.ErrNotFound // never assigned: no lookup
		if key, ok := clientKey(cfg, id); ok {
			c, err = st.Client(r.Context(), key)
		}
	case cfg.CIMD == nil:
		err = store.ErrNotFound // with CIMD off, a URL is an unknown client
	default:
		var ok bool
		if c, ok = cimdAuthorizeClient(w, r, logger, cfg, st, id); !ok {
			return store.Client{}, "", false
		}
	}
	if errors.Is(err, store.ErrNotFound) {
		return invalid("The application is not registered with this server. Start again from your application.")
	}
	if err != nil {
		unavailable(w, r, logger, "client lookup failed", err)
		return store.Client{}, "", false
	}
	redirectURI := q.Get("redirect_uri")
	if redirectURI == "" {
		if len(c.RedirectURIs) != 1 {
			return invalid("The request names no redirect URI, and the application registered several.")
		}
		redirectURI = c.RedirectURIs[0]
	}
	if !oauth.MatchRedirectURI(c.RedirectURIs, redirectURI) {
		return invalid("The redirect URI is not one the application registered.")
	}
	return c, redirectURI, true
}

// requestHash is how a pending request is stored and found: bound to the
// browser session that created it, so a handle is useless in any other
// browser, even one signed in as someone else.
func requestHash(sessionToken, handle string) []byte {
	return oauth.Hash(oauth.MAC(sessionToken, labelRequest, handle))
}

// StepUp tells a step-up from a first request. When a project the client
// holds a grant on (grants: by project) lacks a requested scope, it returns
// what is new and narrows the choice to those projects, the grant the
// client comes back to widen; otherwise nil and the projects unchanged.
func StepUp(projects []store.Project, grants map[string][]string, requested []string) (*oauth.StepUp, []store.Project) {
	var lacking []store.Project
	var newScopes []string
	for _, p := range projects {
		granted, ok := grants[p.ID]
		if !ok {
			continue
		}
		have := func(s string) bool { return slices.Contains(granted, s) }
		missing := slices.DeleteFunc(slices.Clone(requested), have)
		if len(missing) == 0 {
			continue
		}
		lacking = append(lacking, p)
		newScopes = append(newScopes, missing...)
	}
	if len(lacking) == 0 {
		return nil, projects
	}
	s := &oauth.StepUp{}
	if len(lacking) == 1 {
		s.Project = lacking[0].Name
	}
	for _, sc := range oauth.Canonical(newScopes) {
		if sc == oauth.DocumentsRead {
			s.Documents = true
			continue
		}
		s.Others = append(s.Others, oauth.Descriptions[sc])
	}
	return s, lacking
}

// writeTooManyRequestsPage answers an authorization request over the
// principal's bound of pending ones (store.MaxPendingRequests).
func writeTooManyRequestsPage(w http.ResponseWriter) {
	w.Header().Set("Retry-After", strconv.Itoa(int(RequestTTL.Seconds())))
	writeMessage(w, http.StatusTooManyRequests, "Too many open authorization requests",
		"You have "+strconv.Itoa(store.MaxPendingRequests)+" authorization requests open. Finish or close one, "+
			"or wait until they expire (at most "+strconv.Itoa(int(RequestTTL.Minutes()))+" minutes), then try again.")
}
