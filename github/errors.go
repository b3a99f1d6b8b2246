package github

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"syscall"
	"time"
)

// Sentinel errors. Every error returned by this package wraps exactly one of
// them (a *RateLimitError counts as ErrRateLimited), so the server maps it to
// one stable code of docs/design.md §12, given in brackets. No wrapped error
// carries a token, a JWT, key material, a response body or document content:
// causes are reduced to a fixed description first.
var (
	// ErrNotFound [provider_not_found]: GitHub answered 404 (or 409 for an
	// empty repository). GitHub also answers 404 for a private repository the
	// installation token cannot see, so this does not prove absence.
	ErrNotFound = errors.New("github: not found")

	// ErrForbidden [provider_forbidden]: GitHub refused the credentials: 401
	// (after the one retry with a new installation token), a 403 that is not a
	// rate limit, 451, or a token mint refused with 401, 403, 404 or 422 (wrong
	// key, App ID or installation, or a repository the installation lacks).
	ErrForbidden = errors.New("github: forbidden")

	// ErrRateLimited [provider_rate_limited]: a primary or secondary rate
	// limit. Returned as a *RateLimitError carrying the retry delay.
	ErrRateLimited = errors.New("github: rate limited")

	// ErrUnavailable [provider_unavailable]: 5xx, any other unexpected
	// status, a timeout, a connection error, or a response that is not the
	// JSON shape GitHub documents (malformed JSON, missing type, an
	// unsupported content encoding).
	ErrUnavailable = errors.New("github: unavailable")

	// ErrUnreachable [provider_unavailable]: a request got no answer from
	// GitHub: its name did not resolve, the connection was refused or
	// failed, TLS failed, or no answer came in time. It wraps ErrUnavailable.
	ErrUnreachable = fmt.Errorf("%w: not reached", ErrUnavailable)

	// ErrUnconfigured [provider_unconfigured]: no App ID, no usable App key,
	// no installation binding, or an unusable base URL. ParseAppKey's errors
	// wrap it too, so a refused key file reports this code.
	ErrUnconfigured = errors.New("github: not configured")

	// ErrResponseTooLarge [provider_response_too_large]: a response body over
	// its bound (MaxContentsResponse for contents; readBody).
	ErrResponseTooLarge = errors.New("github: response too large")

	// ErrRedirectRejected [provider_redirect_rejected]: GitHub answered with
	// a 3xx (a renamed repository, for example). Redirects are never followed.
	ErrRedirectRejected = errors.New("github: redirect rejected")

	// ErrInconsistent [provider_inconsistent]: the response contradicts
	// itself or the request: a different path, a blob SHA-1 that does not
	// match the bytes, a size that does not match the decoded length, content
	// that is not base64, a branch ref that is not the one asked for, or an
	// installation token broader than the one requested.
	ErrInconsistent = errors.New("github: inconsistent response")

	// ErrNotFile [document_not_file]: the path is a directory, a symlink, a
	// submodule or another non-file object.
	ErrNotFile = errors.New("github: not a regular file")

	// ErrTooLarge [document_too_large]: the file's size is over MaxFileSize,
	// or GitHub did not inline it (encoding "none").
	ErrTooLarge = errors.New("github: document too large")

	// ErrNotUTF8 [document_not_utf8]: the file is not valid UTF-8 or holds a
	// NUL byte.
	ErrNotUTF8 = errors.New("github: document not utf-8")

	// ErrPathInvalid [path_invalid]: a document path breaks the rules of
	// ValidatePath. Returned before any request.
	ErrPathInvalid = errors.New("github: invalid path")

	// ErrBranchInvalid [invalid_argument]: a branch name breaks the rules of
	// ValidateBranch. Returned before any request.
	ErrBranchInvalid = errors.New("github: invalid branch name")

	// ErrInvalidName [invalid_argument]: an owner, repository, commit SHA or
	// binding ID is malformed. Returned before any request.
	ErrInvalidName = errors.New("github: invalid name")
)

// The causes of ErrUnconfigured that a person can fix, each wrapping it, so
// the tool error can name the missing setting.
var (
	ErrNoAppID        = fmt.Errorf("%w: no App ID", ErrUnconfigured)
	ErrNoAppKey       = fmt.Errorf("%w: no App key", ErrUnconfigured)
	ErrNoInstallation = fmt.Errorf("%w: no installation binding", ErrUnconfigured)
)

// RateLimitError is returned when GitHub signals a primary or secondary rate
// limit, or while an earlier one still holds this request (ratelimits.go);
// then no request is sent. errors.Is(err, ErrRateLimited) is true.
type RateLimitError struct {
	// RetryAfter is how long to wait before the next call (retryAfter).
	RetryAfter time.Duration
}

func (e *RateLimitError) Error() string {
	return fmt.Sprintf("github: rate limited; retry after %s", e.RetryAfter)
}

func (e *RateLimitError) Is(target error) bool { return target == ErrRateLimited }

// transportError describes a failed round trip by its cause class, without
// its text, which can hold the URL. Callers wrap the result in ErrUnavailable,
// or in ErrUnreachable when the request did not get an answer.
func transportError(ctx context.Context, err error) string {
	var ne net.Error
	switch {
	case ctx.Err() == context.DeadlineExceeded || errors.Is(err, context.DeadlineExceeded):
		return "deadline exceeded"
	case ctx.Err() != nil || errors.Is(err, context.Canceled):
		return "canceled"
	case errors.As(err, new(*net.DNSError)):
		return "name resolution failed"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.As(err, new(*tls.CertificateVerificationError)), errors.As(err, new(tls.RecordHeaderError)),
		errors.As(err, new(tls.AlertError)):
		return "TLS failed"
	case errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	default:
		return "connection failed"
	}
}
