package authserver

import (
	"encoding/json"
	"slices"
	"strings"
	"unicode/utf8"

	"heyaira/oauth"
	"heyaira/server/internal/web"
	"heyaira/store"
)

// Stable reasons a client ID metadata document is refused. They are shown
// on the error page and logged as the request's code; none quotes the
// document.
const (
	CIMDInvalidJSON      = "cimd_invalid_json"
	CIMDClientIDMismatch = "cimd_client_id_mismatch"
	CIMDSecret           = "cimd_secret_in_document"
	CIMDAuthMethod       = "cimd_auth_method_unsupported"
	CIMDInvalidDocument  = "cimd_invalid_document"
)

// privateJWKMembers are the members of a private or symmetric JSON Web Key
// (RFC 7518 §6.2.2, §6.3.2, §6.4.1). A document is public: one that
// publishes key material is refused.
var privateJWKMembers = []string{"d", "p", "q", "dp", "dq", "qi", "oth", "k"}

// parseCIMDocument validates a document for the URL it was fetched from
// (draft-ietf-oauth-client-id-metadata-document §4): client_id equal to url
// byte for byte, redirect URIs under the registration rules, no secret, no
// authentication method but none. Unknown members, grant and response
// types are ignored (VS Code lists device_code, claude.ai jwt-bearer).
func parseCIMDocument(url string, body []byte) (store.Client, string) {
	if !utf8.Valid(body) || web.CheckJSON(body) != nil {
		return store.Client{}, CIMDInvalidJSON
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil {
		return store.Client{}, CIMDInvalidJSON
	}
	if hasSecret(raw) {
		return store.Client{}, CIMDSecret
	}
	var id, method string
	var doc store.Client
	var uris, grants, responses []string
	if !metadataFields(raw, map[string]any{"client_id": &id, "client_name": &doc.Name, "redirect_uris": &uris,
		"grant_types": &grants, "response_types": &responses, "token_endpoint_auth_method": &method}) {
		return store.Client{}, CIMDInvalidDocument
	}
	if id != url {
		return store.Client{}, CIMDClientIDMismatch
	}
	if method != "" && method != "none" {
		return store.Client{}, CIMDAuthMethod
	}
	if responses != nil && !slices.Contains(responses, "code") {
		return store.Client{}, CIMDInvalidDocument
	}
	if len(grants) == 0 {
		grants = []string{"authorization_code", "refresh_token"} // as for registration
	}
	for _, g := range []string{"authorization_code", "refresh_token"} {
		if slices.Contains(grants, g) {
			doc.GrantTypes = append(doc.GrantTypes, g)
		}
	}
	if !slices.Contains(doc.GrantTypes, "authorization_code") || len(doc.Name) > maxClientName {
		return store.Client{}, CIMDInvalidDocument
	}
	if doc.Name = oauth.CleanName(doc.Name); doc.Name == "" {
		return store.Client{}, CIMDInvalidDocument
	}
	var oerr *oauth.Error
	if doc.RedirectURIs, oerr = keepRedirectURIs(uris); oerr != nil {
		return store.Client{}, CIMDInvalidDocument
	}
	return doc, ""
}

// hasSecret reports whether a document has a client_secret* member, or a
// jwks member that holds private or symmetric key material or is not a JWK
// Set at all.
func hasSecret(raw map[string]json.RawMessage) bool {
	for k := range raw {
		if strings.HasPrefix(k, "client_secret") {
			return true
		}
	}
	jwks := raw["jwks"]
	if jwks == nil || string(jwks) == "null" {
		return false
	}
	var set struct {
		Keys []map[string]json.RawMessage `json:"keys"`
	}
	if json.Unmarshal(jwks, &set) != nil {
		return true
	}
	for _, k := range set.Keys {
		for _, m := range privateJWKMembers {
			if _, ok := k[m]; ok {
				return true
			}
		}
	}
	return false
}
