package authserver

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"heyaira/oauth"
	"heyaira/server/internal/web"
	"heyaira/store"
)

// Dynamic client registration limits (OA-17), each a bucket: per network
// (web.ClientNetwork), per wide network (web.WideNetwork), and for the whole
// server, so that row growth stays bounded whatever the addresses. The
// server-wide bucket is large because a registration is cheap (a row purged
// after a day unless a person authorizes it) and its only harm when spent
// is to everyone, so it must take many wide networks to spend it.
const (
	registerPerIPRate   = 10.0 / 60 // per second
	RegisterPerIPBurst  = 20
	registerWideRate    = 10.0 / 60
	RegisterWideBurst   = 40
	registerGlobalRate  = 2.0
	registerGlobalBurst = 1000
	maxClientName       = 200 // bytes, as schema.sql's CHECK
)

type RegistrationLimiter struct {
	perIP, wide, global *web.RateLimiter
}

func NewRegistrationLimiter() *RegistrationLimiter {
	return &RegistrationLimiter{
		perIP:  web.NewRateLimiter(registerPerIPRate, RegisterPerIPBurst),
		wide:   web.NewRateLimiter(registerWideRate, RegisterWideBurst),
		global: web.NewRateLimiter(registerGlobalRate, registerGlobalBurst),
	}
}

// allow takes one registration from each tier in turn, narrowest first,
// stopping at the first that is spent (so a refused network spends nothing
// wider).
func (l *RegistrationLimiter) admit(r *http.Request, now time.Time) (time.Duration, bool) {
	for _, tier := range []struct {
		bucket *web.RateLimiter
		key    string
	}{{l.perIP, web.ClientNetwork(r)}, {l.wide, web.WideNetwork(r)}, {l.global, "all"}} {
		if wait, ok := tier.bucket.Allow(tier.key, now); !ok {
			return wait, false
		}
	}
	return 0, true
}

// HandleRegister serves RFC 7591 dynamic client registration for public
// clients only: token_endpoint_auth_method "none", no secret. Unknown
// metadata is ignored (RFC 7591 §2). The 201 response echoes the redirect
// URIs kept, which the TypeScript SDK requires.
//
// Check order: body limit → Content-Type → strict JSON → metadata → rate
// limit → store.
func HandleRegister(logger *slog.Logger, cfg *Config, st *store.DB, limit *RegistrationLimiter) http.Handler {
	type response struct {
		ClientID                string   `json:"client_id"`
		ClientIDIssuedAt        int64    `json:"client_id_issued_at"`
		ClientName              string   `json:"client_name,omitempty"`
		RedirectURIs            []string `json:"redirect_uris"`
		GrantTypes              []string `json:"grant_types"`
		ResponseTypes           []string `json:"response_types"`
		TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	}
	return withOAuthCORS(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxRegisterBody))
		if err != nil {
			status, desc := http.StatusBadRequest, "request body unreadable"
			if errors.As(err, new(*http.MaxBytesError)) {
				status, desc = http.StatusRequestEntityTooLarge, "request body too large"
			}
			writeOAuthError(w, status, oauth.ErrCodeInvalidClientMetadata, desc)
			return
		}
		if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
			writeOAuthError(w, http.StatusBadRequest, oauth.ErrCodeInvalidClientMetadata, "Content-Type must be application/json")
			return
		}
		md, oerr := parseClientMetadata(body)
		if oerr != nil {
			web.AddLog(r.Context(), slog.String("code", oerr.Code))
			writeOAuthError(w, http.StatusBadRequest, oerr.Code, oerr.Description)
			return
		}
		// The limit is charged for registrations that would create a row:
		// row growth is what it bounds, and refusals cost no storage.
		if wait, ok := limit.admit(r, cfg.Now()); !ok {
			web.AddLog(r.Context(), slog.String("code", "rate_limited"))
			w.Header().Set("Retry-After", strconv.Itoa(int(wait.Seconds())+1))
			writeOAuthError(w, http.StatusTooManyRequests, "rate_limited", "too many registrations; retry later")
			return
		}
		c, err := st.RegisterClient(r.Context(), md.Name, md.RedirectURIs, md.GrantTypes)
		if err != nil {
			logger.ErrorContext(r.Context(), "client registration failed", "req_id", web.RequestID(r.Context()), "err", err)
			writeOAuthError(w, http.StatusServiceUnavailable, oauth.ErrCodeTemporarilyUnavailable, "registration failed; retry later")
			return
		}
		web.AddLog(r.Context(), slog.String("client_id", c.ID), slog.String("code", "ok"))
		writeOAuthJSON(w, http.StatusCreated, response{
			ClientID: cfg.Secrets.ClientID(c.ID), ClientIDIssuedAt: c.CreatedAt.Unix(), ClientName: c.Name,
			RedirectURIs: c.RedirectURIs, GrantTypes: c.GrantTypes, ResponseTypes: []string{"code"},
			TokenEndpointAuthMethod: "none",
		})
	}))
}

// parseClientMetadata validates a registration request. Redirect URIs
// follow oauth.ValidateRedirectURI; a private-use scheme without a dot
// (Cursor's cursor://…) is dropped when another URI is acceptable and
// refused when it is the only one, while any other bad URI fails the whole
// request (docs/oauth.md).
func parseClientMetadata(body []byte) (store.Client, *oauth.Error) {
	bad := func(msg string) (store.Client, *oauth.Error) {
		return store.Client{}, oauth.NewError(oauth.ErrCodeInvalidClientMetadata, msg)
	}
	if err := web.CheckJSON(body); err != nil {
		return bad("body must be one JSON object without duplicate keys")
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil {
		return bad("body must be a JSON object")
	}
	var md store.Client
	var uris, grants, responses []string
	var method string
	if !metadataFields(raw, map[string]any{"redirect_uris": &uris, "client_name": &md.Name,
		"grant_types": &grants, "response_types": &responses, "token_endpoint_auth_method": &method}) {
		return bad("a metadata field has the wrong type")
	}
	if method != "" && method != "none" {
		return bad("only public clients are supported: token_endpoint_auth_method must be none")
	}
	if slices.ContainsFunc(responses, func(rt string) bool { return rt != "code" }) {
		return bad("response_types may only contain code")
	}
	if len(grants) == 0 {
		// RFC 7591's default is authorization_code alone; we add refresh_token
		// and say so in the response, because clients that omit grant_types
		// still expect to refresh (RFC 7591 §3.2.1 lets the server replace values).
		grants = []string{"authorization_code", "refresh_token"}
	}
	for _, g := range grants {
		if g != "authorization_code" && g != "refresh_token" {
			return bad("grant_types may only contain authorization_code and refresh_token")
		}
		if !slices.Contains(md.GrantTypes, g) {
			md.GrantTypes = append(md.GrantTypes, g)
		}
	}
	if !slices.Contains(md.GrantTypes, "authorization_code") {
		return bad("grant_types must contain authorization_code")
	}
	if !utf8.ValidString(md.Name) || len(md.Name) > maxClientName {
		return bad("client_name must be valid UTF-8 of at most 200 bytes")
	}
	md.Name = oauth.CleanName(md.Name)
	var oerr *oauth.Error
	if md.RedirectURIs, oerr = keepRedirectURIs(uris); oerr != nil {
		return store.Client{}, oerr
	}
	return md, nil
}

// metadataFields reads known metadata members, each by its exact key, because
// encoding/json alone would also take "Redirect_URIs". A missing or null member
// leaves its destination alone; one of the wrong type makes it report false.
func metadataFields(raw map[string]json.RawMessage, fields map[string]any) bool {
	for key, dst := range fields {
		if v, ok := raw[key]; ok && string(v) != "null" && json.Unmarshal(v, dst) != nil {
			return false
		}
	}
	return true
}

// keepRedirectURIs applies the registration rules to a client's redirect
// URIs (also those of a client ID metadata document) and returns the ones
// kept, without duplicates.
func keepRedirectURIs(uris []string) ([]string, *oauth.Error) {
	bad := func(msg string) ([]string, *oauth.Error) {
		return nil, oauth.NewError(oauth.ErrCodeInvalidRedirectURI, msg)
	}
	if len(uris) == 0 {
		return bad("redirect_uris is required")
	}
	if len(uris) > oauth.MaxRedirectURIs {
		return bad("at most 10 redirect_uris")
	}
	var kept []string
	seen := map[string]bool{}
	for i, u := range uris {
		err := oauth.ValidateRedirectURI(u)
		switch {
		case errors.Is(err, oauth.ErrDotlessScheme):
			continue
		case err != nil:
			// The reason, without the package prefix, never quotes the input.
			return bad("redirect_uris[" + strconv.Itoa(i) + "]: " + strings.TrimPrefix(err.Error(), "oauth: "))
		case !seen[u]:
			seen[u] = true
			kept = append(kept, u)
		}
	}
	if len(kept) == 0 {
		return bad("no acceptable redirect URI: use https, http on a loopback address, " +
			"or a private-use scheme containing a dot")
	}
	return kept, nil
}
