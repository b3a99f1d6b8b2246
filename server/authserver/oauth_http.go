package authserver

import (
	"bytes"
	"encoding/base64"
	"errors"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"heyaira/oauth"
	"heyaira/server/internal/web"
	"heyaira/store"
)

const (
	// Lifetimes of the authorization server's secrets (docs/oauth.md).
	CodeTTL          = 10 * time.Minute    // OAuth 2.1 §4.1.2: at most 10 minutes
	AccessTTL        = time.Hour           // docs/design.md §8
	RefreshFamilyTTL = 30 * 24 * time.Hour // absolute: rotation never extends it
	RequestTTL       = 15 * time.Minute    // a consent page left open longer must be restarted
	pendingTTL       = 15 * time.Minute    // the sign-in link's own lifetime

	// Body bounds.
	maxOAuthForm    = 16 << 10
	maxRegisterBody = 128 << 10
	maxState        = 1024
	maxPendingURI   = 3000

	// Cookie base names; cookieName adds the __Host- prefix on https.
	CookieSession    = "heyaira_session"
	CookieSigninCSRF = "heyaira_signin_csrf"
	CookiePending    = "heyaira_pending"

	// Labels that keep the MAC-derived tokens of different uses apart.
	labelConsentCSRF = "heyaira consent csrf v1"
	labelRequest     = "heyaira consent request v1"
	labelSigninCSRF  = "heyaira signin csrf v1"
)

func secureCookies(cfg *Config) bool { return strings.HasPrefix(cfg.PublicURL, "https://") }

// cookieName prefixes __Host- when the public URL is https: the browser then
// refuses the cookie unless it is Secure, host-only and Path=/, so a sibling
// subdomain cannot plant or overwrite it.
func cookieName(cfg *Config, base string) string {
	if secureCookies(cfg) {
		return "__Host-" + base
	}
	return base
}

// setCookie sets an HttpOnly, SameSite=Lax, host-only cookie on Path=/.
// SameSite=Lax keeps the session on the top-level navigation that brings a
// browser from an MCP client to /oauth/authorize, and off cross-site POSTs.
func setCookie(w http.ResponseWriter, cfg *Config, base, value string, ttl time.Duration) {
	http.SetCookie(w, &http.Cookie{Name: cookieName(cfg, base), Value: value, Path: "/",
		MaxAge: int(ttl / time.Second), HttpOnly: true, Secure: secureCookies(cfg), SameSite: http.SameSiteLaxMode})
}

// clearCookie makes the browser delete the cookie.
func clearCookie(w http.ResponseWriter, cfg *Config, base string) {
	setCookie(w, cfg, base, "", -time.Second)
}

func readCookie(r *http.Request, cfg *Config, base string) string {
	c, err := r.Cookie(cookieName(cfg, base))
	if err != nil {
		return ""
	}
	return c.Value
}

// currentSession returns the browser's session secret and session, ok=false
// when there is none (or it expired), or a store error.
func currentSession(r *http.Request, cfg *Config, st *store.DB) (string, store.Session, bool, error) {
	tok := readCookie(r, cfg, CookieSession)
	if !cfg.Secrets.Valid(tok, oauth.PrefixSession, cfg.Now()) {
		return "", store.Session{}, false, nil
	}
	s, err := st.Session(r.Context(), oauth.Hash(tok))
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			err = nil // no session
		}
		return "", store.Session{}, false, err
	}
	return tok, s, true, nil
}

// setPageHeaders forbids framing (clickjacking on consent and sign-in),
// scripts and caching of every HTML page of the flow.
func setPageHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
}

// writePage renders a page into memory first, so a template error cannot
// leave half a page behind a 200.
func writePage(w http.ResponseWriter, status int, render func(io.Writer) error) {
	var b bytes.Buffer
	if err := render(&b); err != nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	setPageHeaders(w)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(b.Bytes())
}

func writeMessage(w http.ResponseWriter, status int, title, msg string) {
	writePage(w, status, oauth.MessagePage{Title: title, Message: msg}.Render)
}

// unavailable logs why the store could not answer a page's request, under
// the request id, and shows the page that says to try again.
func unavailable(w http.ResponseWriter, r *http.Request, logger *slog.Logger, what string, err error) {
	logger.WarnContext(r.Context(), what, "req_id", web.RequestID(r.Context()), "err", err)
	w.Header().Set("Retry-After", "5")
	writeMessage(w, http.StatusServiceUnavailable, "Try again shortly", "The service cannot reach its database. Try again in a moment.")
}

// writeOAuthJSON writes a token-endpoint style JSON response: never cached
// (OAuth 2.1 §3.2.3).
func writeOAuthJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Pragma", "no-cache")
	web.WriteJSON(w, status, v)
}

func writeOAuthError(w http.ResponseWriter, status int, code, description string) {
	if status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "2")
	}
	writeOAuthJSON(w, status, oauth.NewError(code, description))
}

// withOAuthCORS lets browser-based MCP clients call the JSON endpoints
// (register, token, revoke). They use no cookies, so any origin may call
// them, without credentials. The authorization endpoint never gets CORS
// (RFC 9700 §2.6).
func withOAuthCORS(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", "*")
		next.ServeHTTP(w, r)
	})
}

// HandleOAuthPreflight answers CORS preflights for the JSON endpoints.
func HandleOAuthPreflight() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", "*")
		h.Set("Access-Control-Allow-Methods", "POST, OPTIONS")
		h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, MCP-Protocol-Version")
		h.Set("Access-Control-Max-Age", "600")
		w.WriteHeader(http.StatusNoContent)
	})
}

// readForm reads a bounded application/x-www-form-urlencoded body strictly
// (oauth.ParseForm). Only the parameters in repeatable may repeat.
func readForm(w http.ResponseWriter, r *http.Request, repeatable ...string) (oauth.Form, error) {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/x-www-form-urlencoded" {
		return nil, errors.New("Content-Type must be application/x-www-form-urlencoded")
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxOAuthForm))
	if err != nil {
		return nil, errors.New("request body unreadable or too large")
	}
	f, err := oauth.ParseForm(string(body), repeatable...)
	if err != nil {
		return nil, errors.New("malformed form: " + strings.TrimPrefix(err.Error(), "oauth: "))
	}
	return f, nil
}

// check is one request check: when bad, the request is refused with code
// and desc.
type check struct {
	bad        bool
	code, desc string
}

// firstFailed returns the refusal of the first bad check, in order, or nil.
func firstFailed(checks ...check) *oauth.Error {
	for _, c := range checks {
		if c.bad {
			return oauth.NewError(c.code, c.desc)
		}
	}
	return nil
}

// clientRedirect builds the redirect back to a client: the registered URI
// with params added to its query (existing query kept, RFC 6749 §3.1.2), and
// always iss (RFC 9207), because the metadata promises it.
func clientRedirect(cfg *Config, redirectURI string, params url.Values, state string) string {
	if state != "" {
		params.Set("state", state)
	}
	params.Set("iss", cfg.PublicURL)
	sep := "?"
	if strings.Contains(redirectURI, "?") {
		sep = "&"
	}
	return redirectURI + sep + params.Encode()
}

// redirect303 sends a browser on with 303 See Other, never 307: a 307 would
// replay a POST body (credentials, codes) to the next site (RFC 9700 §4.12).
func redirect303(w http.ResponseWriter, location string) {
	w.Header().Set("Location", location)
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusSeeOther)
}

// canonicalResource checks an RFC 8707 resource parameter: absent, or this
// server's resource, with scheme and host in any case and one trailing slash
// tolerated (variants the MCP spec asks resource servers to accept). It
// returns the canonical form, so every token's audience is exactly
// cfg.resource().
func canonicalResource(cfg *Config, s string) (string, bool) {
	want := cfg.resource()
	if s == "" || s == want {
		return want, true
	}
	u, err := url.Parse(s)
	w, _ := url.Parse(want)
	if err != nil || u.User != nil || u.RawQuery != "" || u.Fragment != "" || strings.HasSuffix(s, "#") || strings.HasSuffix(s, "?") {
		return "", false
	}
	if strings.EqualFold(u.Scheme, w.Scheme) && strings.EqualFold(u.Host, w.Host) &&
		(u.EscapedPath() == w.EscapedPath() || u.EscapedPath() == w.EscapedPath()+"/") {
		return want, true
	}
	return "", false
}

// PendingValue and PendingTarget carry an authorization request's URL
// through sign-in in a cookie. The target is only ever a path on this
// server under /oauth/authorize, so the cookie cannot make an open redirect.
func PendingValue(requestURI string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(requestURI))
}

func PendingTarget(v string) (string, bool) {
	b, err := base64.RawURLEncoding.Strict().DecodeString(v)
	if err != nil {
		return "", false
	}
	s := string(b)
	// Any byte from 0x7f up makes a rune from 0x7f up (U+FFFD if invalid).
	unsafe := func(c rune) bool { return c <= 0x20 || c >= 0x7f || c == '\\' || c == '#' }
	if !strings.HasPrefix(s, oauth.PathAuthorize+"?") || len(s) > maxPendingURI ||
		strings.ContainsFunc(s, unsafe) {
		return "", false
	}
	return s, true
}
