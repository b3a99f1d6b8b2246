package server

import (
	"encoding/json"
	"slices"
	"strings"
	"unicode/utf8"

	"heyaira/oauth"
)

// Stable reasons a client ID metadata document is refused. They are shown
// on the error page and logged as the request's code; none quotes the
// document.
const (
	cimdInvalidJSON      = "cimd_invalid_json"
	cimdClientIDMismatch = "cimd_client_id_mismatch"
	cimdSecret           = "cimd_secret_in_document"
	cimdAuthMethod       = "cimd_auth_method_unsupported"
	cimdInvalidDocument  = "cimd_invalid_document"
)

// cimdDocument is what HeyAira keeps of a valid document.
type cimdDocument struct {
	name         string
	redirectURIs []string
	grantTypes   []string
}

// privateJWKMembers are the members of a private or symmetric JSON Web Key
// (RFC 7518 §6.2.2, §6.3.2, §6.4.1). A document is public: one that
// publishes key material is refused.
var privateJWKMembers = []string{"d", "p", "q", "dp", "dq", "qi", "oth", "k"}

// parseCIMDocument validates a fetched document for the URL it was fetched
// from (draft-ietf-oauth-client-id-metadata-document §4). The body has
// passed the fetcher's size and media-type checks. It must be valid UTF-8
// and one JSON object without duplicate members; client_id must equal url
// byte for byte; client_name and redirect_uris are required, and each
// redirect URI obeys the registration rules. No client_secret* member, no
// authentication method but none, no private key. Unknown members and
// unknown grant or response types are ignored (VS Code lists device_code,
// claude.ai jwt-bearer), but the document must allow authorization_code.
func parseCIMDocument(url string, body []byte) (cimdDocument, string) {
	if !utf8.Valid(body) || checkJSON(body) != nil {
		return cimdDocument{}, cimdInvalidJSON
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil {
		return cimdDocument{}, cimdInvalidJSON
	}
	for k := range raw {
		if strings.HasPrefix(k, "client_secret") {
			return cimdDocument{}, cimdSecret
		}
	}
	if hasPrivateKey(raw["jwks"]) {
		return cimdDocument{}, cimdSecret
	}
	var id, method string
	var doc cimdDocument
	var uris, grants, responses []string
	if !metadataFields(raw, map[string]any{"client_id": &id, "client_name": &doc.name, "redirect_uris": &uris,
		"grant_types": &grants, "response_types": &responses, "token_endpoint_auth_method": &method}) {
		return cimdDocument{}, cimdInvalidDocument
	}
	if id != url {
		return cimdDocument{}, cimdClientIDMismatch
	}
	if method != "" && method != "none" {
		return cimdDocument{}, cimdAuthMethod
	}
	if responses != nil && !slices.Contains(responses, "code") {
		return cimdDocument{}, cimdInvalidDocument
	}
	if len(grants) == 0 {
		grants = []string{"authorization_code", "refresh_token"} // as for registration
	}
	for _, g := range []string{"authorization_code", "refresh_token"} {
		if slices.Contains(grants, g) {
			doc.grantTypes = append(doc.grantTypes, g)
		}
	}
	if !slices.Contains(doc.grantTypes, "authorization_code") {
		return cimdDocument{}, cimdInvalidDocument
	}
	if len(doc.name) > maxClientName {
		return cimdDocument{}, cimdInvalidDocument
	}
	if doc.name = oauth.CleanName(doc.name); doc.name == "" {
		return cimdDocument{}, cimdInvalidDocument
	}
	kept, oerr := keepRedirectURIs(uris)
	if oerr != nil {
		return cimdDocument{}, cimdInvalidDocument
	}
	doc.redirectURIs = kept
	return doc, ""
}

// hasPrivateKey reports whether a jwks member holds a key with private or
// symmetric material, or is not a JWK Set at all.
func hasPrivateKey(jwks json.RawMessage) bool {
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
