package github

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// Body bounds. MaxContentsResponse (docs/design.md §10): a 1 MiB file is about
// 1,445,000 bytes of JSON once base64-encoded in 60-character lines with each
// newline escaped, so 1,500,000 leaves room for the metadata and no more.
const (
	MaxContentsResponse = 1_500_000
	maxRefResponse      = 64 << 10
	maxMintResponse     = 256 << 10
	maxErrorBody        = 64 << 10
)

// Rate-limit waits: GitHub asks for at least a minute when it gives no hint.
const (
	defaultRetryAfter = 60 * time.Second
	minRetryAfter     = time.Second
	maxRetryAfter     = time.Hour
)

// readBody reads the whole body through limit. A Content-Length over the
// limit fails before a byte of the body is read; without one (or with one
// net/http ignores, as under chunked framing) at most limit+1 bytes are read.
// Errors wrap ErrResponseTooLarge or ErrUnavailable.
func readBody(resp *http.Response, limit int64) ([]byte, error) {
	if resp.ContentLength > limit {
		return nil, fmt.Errorf("%w: Content-Length %d over %d", ErrResponseTooLarge, resp.ContentLength, limit)
	}
	// Room for the announced length (-1 when unknown) and the final
	// zero-length read, so a buffer of the right size never grows.
	buf := bytes.NewBuffer(make([]byte, 0, max(resp.ContentLength, 0)+bytes.MinRead))
	_, err := buf.ReadFrom(io.LimitReader(resp.Body, limit+1))
	if int64(buf.Len()) > limit {
		return nil, fmt.Errorf("%w: body over %d bytes", ErrResponseTooLarge, limit)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: reading body: %s", ErrUnavailable, transportError(resp.Request.Context(), err))
	}
	return buf.Bytes(), nil
}

// checkStatus converts a response GitHub did not mean as success into an
// error wrapping one sentinel. It reads at most maxErrorBody bytes of the
// body, and only to tell a secondary rate limit from a permission 403; the
// body never reaches the error.
func checkStatus(resp *http.Response, now time.Time) error {
	code := resp.StatusCode
	switch {
	case code >= 300 && code <= 399:
		return fmt.Errorf("%w: status %d", ErrRedirectRejected, code)
	case code == http.StatusNotFound, code == http.StatusConflict:
		// 409 is GitHub's answer for an empty repository.
		return fmt.Errorf("%w: status %d", ErrNotFound, code)
	case code == http.StatusTooManyRequests, code == http.StatusForbidden && isRateLimit(resp):
		return &RateLimitError{RetryAfter: retryAfter(resp.Header, now)}
	case code == http.StatusUnauthorized, code == http.StatusForbidden,
		code == http.StatusUnavailableForLegalReasons:
		return fmt.Errorf("%w: status %d", ErrForbidden, code)
	default:
		return fmt.Errorf("%w: status %d", ErrUnavailable, code)
	}
}

// checkAnswer is checkStatus for the answer to a contents or ref request. A
// rate limit that is not the primary one (x-ratelimit-remaining is not 0) is
// a secondary limit: it is marked, so that its back-off can be charged to
// the tenant the request was made for (ratelimits.go). A mint's answer goes
// through checkStatus alone and so always holds the installation.
func checkAnswer(resp *http.Response, now time.Time) error {
	err := checkStatus(resp, now)
	var rl *RateLimitError
	if errors.As(err, &rl) && resp.Header.Get("X-RateLimit-Remaining") != "0" {
		return &secondaryLimit{rl}
	}
	return err
}
