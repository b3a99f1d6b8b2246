package github

import "errors"

// Test-only exports for the external test package github_test.

// SentinelCodes lists every sentinel with the stable code docs/design.md §12
// assigns it (the server's table must agree).
var SentinelCodes = []struct {
	Err  error
	Code string
}{
	{ErrNotFound, "provider_not_found"},
	{ErrForbidden, "provider_forbidden"},
	{ErrRateLimited, "provider_rate_limited"},
	{ErrUnavailable, "provider_unavailable"},
	{ErrUnconfigured, "provider_unconfigured"},
	{ErrResponseTooLarge, "provider_response_too_large"},
	{ErrRedirectRejected, "provider_redirect_rejected"},
	{ErrInconsistent, "provider_inconsistent"},
	{ErrNotFile, "document_not_file"},
	{ErrTooLarge, "document_too_large"},
	{ErrNotUTF8, "document_not_utf8"},
	{ErrPathInvalid, "path_invalid"},
	{ErrBranchInvalid, "invalid_argument"},
	{ErrInvalidName, "invalid_argument"},
}

// CodeOf returns the code of the sentinels err wraps and how many match.
func CodeOf(err error) (code string, matches int) {
	for _, s := range SentinelCodes {
		if errors.Is(err, s.Err) {
			code = s.Code
			matches++
		}
	}
	return code, matches
}

// EscapeSegments exposes escapeSegments.
var EscapeSegments = escapeSegments
