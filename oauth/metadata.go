package oauth

// ServerMetadata is the RFC 8414 authorization-server metadata document.
type ServerMetadata struct {
	Issuer                            string   `json:"issuer"`
	AuthorizationEndpoint             string   `json:"authorization_endpoint"`
	TokenEndpoint                     string   `json:"token_endpoint"`
	RegistrationEndpoint              string   `json:"registration_endpoint"`
	RevocationEndpoint                string   `json:"revocation_endpoint"`
	ScopesSupported                   []string `json:"scopes_supported"`
	ResponseTypesSupported            []string `json:"response_types_supported"`
	ResponseModesSupported            []string `json:"response_modes_supported"`
	GrantTypesSupported               []string `json:"grant_types_supported"`
	TokenEndpointAuthMethodsSupported []string `json:"token_endpoint_auth_methods_supported"`
	RevocationEndpointAuthMethods     []string `json:"revocation_endpoint_auth_methods_supported"`
	CodeChallengeMethodsSupported     []string `json:"code_challenge_methods_supported"`
	AuthorizationResponseIss          bool     `json:"authorization_response_iss_parameter_supported"`
	ClientIDMetadataDocumentSupported bool     `json:"client_id_metadata_document_supported"`
}

// Endpoint paths, relative to the issuer.
const (
	PathAuthorize = "/oauth/authorize"
	PathToken     = "/oauth/token"
	PathRegister  = "/oauth/register"
	PathRevoke    = "/oauth/revoke"
)

// NewServerMetadata builds the metadata document for issuer, which must be
// the configured public URL without a trailing slash. Because every URL is
// derived from issuer alone, a request's Host or X-Forwarded-* headers can
// never change it (RFC 8414 §3.3; CVE-2025-6514 shows what clients do with
// an attacker's endpoint). code_challenge_methods_supported is always
// present: the Go SDK and the MCP spec refuse a server without it.
func NewServerMetadata(issuer string) ServerMetadata {
	return ServerMetadata{
		Issuer:                            issuer,
		AuthorizationEndpoint:             issuer + PathAuthorize,
		TokenEndpoint:                     issuer + PathToken,
		RegistrationEndpoint:              issuer + PathRegister,
		RevocationEndpoint:                issuer + PathRevoke,
		ScopesSupported:                   append([]string(nil), Supported...),
		ResponseTypesSupported:            []string{"code"},
		ResponseModesSupported:            []string{"query"},
		GrantTypesSupported:               []string{"authorization_code", "refresh_token"},
		TokenEndpointAuthMethodsSupported: []string{"none"},
		RevocationEndpointAuthMethods:     []string{"none"},
		CodeChallengeMethodsSupported:     []string{MethodS256},
		AuthorizationResponseIss:          true,
		ClientIDMetadataDocumentSupported: false,
	}
}
