package oauth

// Error codes of RFC 6749 §4.1.2.1 and §5.2, RFC 7591 §3.2.2, RFC 7009 §2.2.1
// and RFC 8707 §2. They are the "error" member of a JSON error body or the
// error parameter of an authorization redirect.
const (
	ErrCodeInvalidRequest          = "invalid_request"
	ErrCodeInvalidClient           = "invalid_client"
	ErrCodeInvalidGrant            = "invalid_grant"
	ErrCodeUnauthorizedClient      = "unauthorized_client"
	ErrCodeUnsupportedGrantType    = "unsupported_grant_type"
	ErrCodeUnsupportedResponseType = "unsupported_response_type"
	ErrCodeInvalidScope            = "invalid_scope"
	ErrCodeAccessDenied            = "access_denied"
	ErrCodeInvalidTarget           = "invalid_target"
	ErrCodeServerError             = "server_error"
	ErrCodeTemporarilyUnavailable  = "temporarily_unavailable"
	ErrCodeInvalidRedirectURI      = "invalid_redirect_uri"
	ErrCodeInvalidClientMetadata   = "invalid_client_metadata"
)

// Error is an OAuth error response: a code from the list above and a public
// description. The description is plain text for the client's developer; it
// never holds a secret or internal detail.
type Error struct {
	Code        string `json:"error"`
	Description string `json:"error_description,omitempty"`
}

func (e *Error) Error() string { return "oauth: " + e.Code + ": " + e.Description }

func NewError(code, description string) *Error { return &Error{Code: code, Description: description} }
