package mcp

import (
	"errors"
	"math"
	"time"

	"heyaira/cursor"
	"heyaira/github"
	"heyaira/store"
)

// CodedError is a failure with a stable code and a public message, raised by
// the server itself (argument checks, source states, ranges).
type CodedError struct {
	code    string
	message string
}

func (e *CodedError) Error() string { return e.code + ": " + e.message }

func NewCoded(code, message string) error { return &CodedError{code, message} }

// FieldsError is a coded error with extra structured fields for the tool
// error's structuredContent.error object (e.g. retry_after_seconds).
type FieldsError struct {
	err    *CodedError
	fields map[string]any
}

func (e *FieldsError) Error() string          { return e.err.Error() }
func (e *FieldsError) Unwrap() error          { return e.err }
func (e *FieldsError) Fields() map[string]any { return e.fields }

// Code is the stable code of the failure.
func (e *FieldsError) Code() string { return e.err.code }

// Code is the stable code of the failure.
func (e *CodedError) Code() string { return e.code }

// WithFields is a coded failure with extra structured fields.
func WithFields(code, message string, fields map[string]any) error {
	return &FieldsError{err: &CodedError{code, message}, fields: fields}
}

func InvalidArgument(msg string) error { return NewCoded("invalid_argument", msg) }

// NotFound is err, or the tool's own answer when it is store.ErrNotFound.
func NotFound(err, answer error) error {
	if errors.Is(err, store.ErrNotFound) {
		return answer
	}
	return err
}

// errorCodes maps errors from leaf packages to stable tool-error codes.
// Codes are part of the public API: append only, never rename or reuse. The
// README lists every code (a test checks that).
var errorCodes = []struct {
	target error
	code   string
	public string
}{
	{github.ErrPathInvalid, "path_invalid", "the document path is not a valid repository path"},
	{github.ErrNotFile, "document_not_file", "the path is not an ordinary file (directory, symlink or submodule)"},
	{github.ErrTooLarge, "document_too_large", "the document is larger than 1 MiB"},
	{github.ErrNotUTF8, "document_not_utf8", "the document is not valid UTF-8 text"},
	{github.ErrNotFound, "provider_not_found", "GitHub has no such repository, commit or file, or the App cannot see it"},
	{github.ErrForbidden, "provider_forbidden", "GitHub refused access with the App's credentials"},
	{github.ErrRateLimited, "provider_rate_limited", "GitHub's rate limit was reached; retry later"},
	{github.ErrUnreachable, "provider_unavailable", "GitHub could not be reached from this server; retry later " +
		"(its operator finds the cause in the server's log under this request's id)"},
	{github.ErrUnavailable, "provider_unavailable", "GitHub answered with an error or an unexpected response; retry later"},
	{github.ErrNoAppID, "provider_unconfigured", "this server has no GitHub App: its operator sets HEYAIRA_GITHUB_APP_ID " +
		"and HEYAIRA_GITHUB_APP_PRIVATE_KEY_FILE (docs/github-app.md) and restarts it"},
	{github.ErrNoAppKey, "provider_unconfigured", "this server has no usable GitHub App key: its operator sets " +
		"HEYAIRA_GITHUB_APP_PRIVATE_KEY_FILE to the App's PEM key file (docs/github-app.md) and restarts it"},
	{github.ErrNoInstallation, "provider_unconfigured", "the repository is linked without a GitHub App installation: " +
		"an administrator links it again with heyaira-admin link-repository --github-installation-id I (docs/github-app.md)"},
	{github.ErrUnconfigured, "provider_unconfigured", "the GitHub App is not configured for this repository (docs/github-app.md)"},
	{github.ErrResponseTooLarge, "provider_response_too_large", "GitHub's response exceeded the size bound"},
	{github.ErrRedirectRejected, "provider_redirect_rejected", "GitHub answered with a redirect, which is not followed"},
	{github.ErrInconsistent, "provider_inconsistent", "GitHub's response does not match the requested document"},
	{github.ErrBranchInvalid, "invalid_argument", "invalid branch name"},
	{github.ErrInvalidName, "invalid_argument", "invalid repository name"},
	{cursor.ErrExpired, "cursor_expired", "the cursor has expired; start again without it"},
	{cursor.ErrInvalid, "cursor_invalid", "the cursor is not valid for this request"},
	{store.ErrNotFound, "not_found", "no such record"},
	{store.ErrConflict, "conflict", "the record changed or already exists"},
	{store.ErrUnavailable, "store_unavailable", "the database is unavailable; retry later"},
	{store.ErrQuotaExceeded, "quota_exceeded", "a storage quota of the project is reached"},
}

// publicCodes is every code a client can see, in the order they were added.
// Append only: codes are API. The README documents each (a test checks that,
// and that every code raised anywhere in this package is listed here).
var publicCodes = []string{
	"invalid_argument", "runtime_unconfigured", "source_not_found", "source_revoked",
	"repository_revoked", "source_requires_dispatch", "cursor_invalid", "cursor_expired",
	"byte_range_invalid", "path_invalid", "document_not_file", "document_too_large",
	"document_not_utf8", "provider_not_found", "provider_forbidden", "provider_rate_limited",
	"provider_unavailable", "provider_unconfigured", "provider_response_too_large",
	"provider_redirect_rejected", "provider_inconsistent", "not_found", "conflict",
	"catalog_budget_exceeded", "profile_not_found", "dispatch_config_changed",
	"store_unavailable", "rate_limited", "internal", "quota_exceeded",
}

// Classify returns the stable code and public message for err.
func Classify(err error) (code, public string) {
	var ce *CodedError
	if errors.As(err, &ce) {
		return ce.code, ce.message
	}
	for _, e := range errorCodes {
		if errors.Is(err, e.target) {
			return e.code, e.public
		}
	}
	return "internal", "internal error"
}

// githubFailure gives a GitHub rate limit, whether GitHub just answered it
// or the client still holds it (github/ratelimits.go), its wait as
// retry_after_seconds beside the stable provider_rate_limited code. Any
// other error passes unchanged.
func GitHubFailure(err error) error {
	var rl *github.RateLimitError
	if !errors.As(err, &rl) {
		return err
	}
	code, public := Classify(err)
	return &FieldsError{err: &CodedError{code, public}, fields: retryFields(rl.RetryAfter)}
}

// RetryAfter is a rate_limited refusal with retry_after_seconds for wait.
func RetryAfter(message string, wait time.Duration) error {
	return &FieldsError{err: &CodedError{"rate_limited", message}, fields: retryFields(wait)}
}

// retryFields is the retry_after_seconds field for wait, in whole seconds
// rounded up, at least 1.
func retryFields(wait time.Duration) map[string]any {
	return map[string]any{"retry_after_seconds": max(1, int(math.Ceil(wait.Seconds())))}
}
