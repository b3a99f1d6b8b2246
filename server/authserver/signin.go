package authserver

import (
	"errors"
	"log/slog"
	"net/http"

	"heyaira/oauth"
	"heyaira/server/internal/web"
	"heyaira/store"
)

// HandleSigninPage serves GET /signin. With ?token= (a one-time link from
// `heyaira-admin signin-link`) it says whose link it is (principal and
// account) and, if the browser is signed in as someone else, that too; it
// shows a button and changes nothing, so a mail scanner or link preview
// that fetches the link cannot use it up. It sets a random CSRF cookie; the
// form carries an HMAC of the link under it. Without a token it says how to
// sign in, or that the browser is signed in.
func HandleSigninPage(logger *slog.Logger, cfg *Config, st *store.DB) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q, err := oauth.ParseForm(r.URL.RawQuery)
		if err != nil {
			writeMessage(w, http.StatusBadRequest, "Invalid sign-in link", "This sign-in link is malformed.")
			return
		}
		token := q.Get("token")
		if token == "" {
			_, sess, ok, err := currentSession(r, cfg, st)
			if err != nil {
				unavailable(w, r, logger, "session lookup failed", err)
				return
			}
			if ok {
				writePage(w, http.StatusOK, oauth.SignedInPage{Principal: sess.PrincipalName}.Render)
				return
			}
			_, pending := PendingTarget(readCookie(r, cfg, CookiePending))
			writePage(w, http.StatusOK, oauth.SigninPromptPage{Pending: pending}.Render)
			return
		}
		owner, other, ok := signinParties(w, r, logger, cfg, st, token)
		if !ok {
			return
		}
		csrf := oauth.NewSecret(oauth.PrefixCSRF)
		setCookie(w, cfg, CookieSigninCSRF, csrf, pendingTTL)
		writePage(w, http.StatusOK, oauth.SigninPage{Action: "/signin", Token: token,
			CSRF: oauth.MAC(csrf, labelSigninCSRF, token), Principal: owner.PrincipalName,
			Account: owner.AccountName, SignedIn: other}.Render)
	})
}

// signinParties finds whose link token is and, when the browser is signed
// in as another principal, that principal's name (else ""). A malformed or
// unusable link or a store error gets its page here, and ok=false.
func signinParties(w http.ResponseWriter, r *http.Request, logger *slog.Logger, cfg *Config, st *store.DB,
	token string) (owner store.SigninLinkOwner, other string, ok bool) {
	if !cfg.Secrets.Valid(token, oauth.PrefixSignin, cfg.Now()) {
		writeMessage(w, http.StatusBadRequest, "Invalid sign-in link", "This sign-in link is not valid. Ask for a new one.")
		return owner, "", false
	}
	owner, err := st.SigninLinkOwner(r.Context(), oauth.Hash(token))
	if errors.Is(err, store.ErrNotFound) {
		linkNotValid(w, r)
		return owner, "", false
	}
	if err != nil {
		unavailable(w, r, logger, "sign-in link lookup failed", err)
		return owner, "", false
	}
	_, sess, signedIn, err := currentSession(r, cfg, st)
	if err != nil {
		unavailable(w, r, logger, "session lookup failed", err)
		return owner, "", false
	}
	if signedIn && sess.PrincipalID != owner.PrincipalID {
		other = sess.PrincipalName
	}
	return owner, other, true
}

// HandleSignin serves POST /signin: it redeems the link once and starts a
// browser session. The CSRF check defeats login CSRF: a page elsewhere
// cannot post the attacker's own link from the victim's browser, because it
// can neither read nor set the victim's CSRF cookie (__Host- on https). If
// the browser is signed in as another principal, the form must carry the
// explicit switch (switch=confirm) that the page shows only then, so a
// forwarded link cannot silently replace the session of whoever opened it
// (login CSRF by hand-off); without it nothing changes and the link stays
// usable. Any session cookie the browser already had is revoked and
// replaced by a new random one (no fixation). The answer is a 303 to the
// authorization request that sent the browser here, if any, else /signin.
func HandleSignin(logger *slog.Logger, cfg *Config, st *store.DB) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		form, err := readForm(w, r)
		if err != nil {
			writeMessage(w, http.StatusBadRequest, "Invalid form", "The sign-in form could not be read.")
			return
		}
		if k := form.Unknown("token", "csrf", "switch"); k != "" {
			writeMessage(w, http.StatusBadRequest, "Invalid form", "The sign-in form has a field it never had.")
			return
		}
		token := form.Get("token")
		cookie := readCookie(r, cfg, CookieSigninCSRF)
		if !oauth.WellFormedSecret(cookie, oauth.PrefixCSRF) ||
			!oauth.Equal(form.Get("csrf"), oauth.MAC(cookie, labelSigninCSRF, token)) {
			web.AddLog(r.Context(), slog.String("code", "csrf_invalid"))
			writeMessage(w, http.StatusForbidden, "Sign-in refused",
				"This sign-in form was not issued to this browser. Open your sign-in link again.")
			return
		}
		owner, other, ok := signinParties(w, r, logger, cfg, st, token)
		if !ok {
			return
		}
		if other != "" && form.Get("switch") != "confirm" {
			web.AddLog(r.Context(), slog.String("code", "signin_switch_unconfirmed"))
			writePage(w, http.StatusConflict, oauth.SigninSwitchPage{Principal: owner.PrincipalName, SignedIn: other}.Render)
			return
		}
		var old []byte
		if prev := readCookie(r, cfg, CookieSession); cfg.Secrets.Valid(prev, oauth.PrefixSession, cfg.Now()) {
			old = oauth.Hash(prev)
		}
		session := cfg.Secrets.Mint(oauth.PrefixSession, cfg.Now().Add(store.SessionTTL))
		sess, err := st.RedeemSigninLink(r.Context(), oauth.Hash(token), oauth.Hash(session), old)
		if errors.Is(err, store.ErrNotFound) {
			linkNotValid(w, r)
			return
		}
		if err != nil {
			unavailable(w, r, logger, "sign-in failed", err)
			return
		}
		web.AddLog(r.Context(), slog.String("principal", store.ActorPrincipal(sess.PrincipalID)), slog.String("code", "ok"))
		setCookie(w, cfg, CookieSession, session, store.SessionTTL)
		clearCookie(w, cfg, CookieSigninCSRF)
		next := "/signin"
		if target, ok := PendingTarget(readCookie(r, cfg, CookiePending)); ok {
			next = target
			clearCookie(w, cfg, CookiePending)
		}
		redirect303(w, next)
	})
}

// linkNotValid answers a link the store does not know (or no longer).
func linkNotValid(w http.ResponseWriter, r *http.Request) {
	web.AddLog(r.Context(), slog.String("code", "signin_link_invalid"))
	writeMessage(w, http.StatusBadRequest, "Sign-in link not valid",
		"This sign-in link is invalid, expired or already used. Ask your administrator for a new one.")
}
