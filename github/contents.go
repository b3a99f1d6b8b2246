package github

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// MaxFileSize is the largest document accepted, in bytes (1 MiB, docs/design.md §10).
const MaxFileSize = 1 << 20

// Binding identifies one repository through one GitHub App installation.
type Binding struct {
	// Owner and Repo name the repository (see ValidateOwner, ValidateRepo).
	Owner, Repo string
	// InstallationID selects the App installation; 0 means unconfigured.
	InstallationID int64
	// RepositoryID is GitHub's immutable repository ID, 0 when unknown. When
	// set, tokens are minted with repository_ids instead of the name, so a
	// renamed repository and a newcomer taking its old name cannot be
	// confused.
	RepositoryID int64
	// Tenant names whom the request is made for (the server passes the
	// project); it is never sent. A secondary rate limit answered to it
	// holds this tenant rather than the installation (ratelimits.go); ""
	// means nobody in particular, and every limit holds the installation.
	Tenant string
}

// File is a verified document.
type File struct {
	// Path is the path as GitHub returned it; always equal to the request.
	Path string
	// BlobSHA is the git blob SHA-1 (lowercase hex), verified against Content.
	BlobSHA string
	// Size is len(Content), at most MaxFileSize.
	Size int
	// Content is the file: valid UTF-8 without NUL bytes. A UTF-8 byte order
	// mark is kept as it is. It is decoded in place and shares the buffer
	// the answer was read into (at most MaxContentsResponse bytes), which no
	// other read ever sees.
	Content []byte
	// SHA256 is the SHA-256 of Content.
	SHA256 [sha256.Size]byte
}

// GetFile reads the file at path in commit commitSHA of b's repository with
// one contents request, retried only as the package doc says, and bounds and
// verifies the answer (decodeContents).
func (c *Client) GetFile(ctx context.Context, b Binding, path, commitSHA string) (*File, error) {
	return get(ctx, c, b, "github: get file", firstError(ValidatePath(path), ValidateCommitSHA(commitSHA)),
		"contents", "/contents/"+escapeSegments(path)+"?ref="+commitSHA,
		"application/vnd.github.object+json", MaxContentsResponse,
		func(body []byte) (*File, error) { return decodeContents(body, path) })
}

// get checks b's names, the request's own (valid) and the App configuration
// before any request, then runs one authenticated GET of c.repoURL(b)+suffix
// with the 401-retry rule and hands the body of a 200, read through limit, to
// decode. While a rate limit holds b (ratelimits.go), no request is sent.
// Every error is prefixed with op.
func get[T any](ctx context.Context, c *Client, b Binding, op string, valid error,
	route, suffix, accept string, limit int64, decode func([]byte) (T, error)) (T, error) {
	var zero T
	err := firstError(ValidateOwner(b.Owner), ValidateRepo(b.Repo), valid, c.configured(b))
	if err == nil {
		err = c.rateLimits.check(b, c.cfg.Now())
	}
	if err != nil {
		return zero, fmt.Errorf("%s: %w", op, err)
	}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	v, err := callOnce(ctx, c, b, route, c.repoURL(b)+suffix, accept, limit, decode)
	if err = c.rateLimits.note(b, err, c.cfg.Now()); err != nil {
		return zero, fmt.Errorf("%s: %w", op, err)
	}
	return v, nil
}

func callOnce[T any](ctx context.Context, c *Client, b Binding, route, u, accept string, limit int64,
	decode func([]byte) (T, error)) (T, error) {
	var zero T
	for attempt := 0; ; attempt++ {
		tok, fresh, err := c.token(ctx, b)
		if err != nil {
			return zero, err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return zero, fmt.Errorf("%w: building request", ErrUnconfigured)
		}
		req.Header.Set("Accept", accept)
		req.Body = emptyBody{} // the request is not replayable: see emptyBody
		resp, err := c.send(ctx, route, req, tok)
		if err != nil {
			return zero, fmt.Errorf("%w: %s", ErrUnreachable, transportError(ctx, err))
		}
		if resp.StatusCode == http.StatusUnauthorized && !fresh && attempt == 0 {
			// The cached token was revoked or expired early: drop it (only
			// if nobody replaced it yet), mint a new one, retry once.
			resp.Body.Close()
			c.dropToken(b, tok)
			c.cfg.Logger.WarnContext(ctx, "github token refused; minting a new one",
				"route", route, "installation", b.InstallationID)
			continue
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return zero, checkAnswer(resp, c.cfg.Now())
		}
		body, err := readBody(resp, limit)
		if err != nil {
			return zero, err
		}
		return decode(body)
	}
}

// emptyBody is an empty request body that net/http cannot rewind, so it
// does not silently resend a request when a reused connection breaks before
// the answer: one read is exactly one request, and a reset is the caller's
// to retry (docs/design.md §10, §14). net/http finds it empty and sends no
// body.
type emptyBody struct{}

func (emptyBody) Read([]byte) (int, error) { return 0, io.EOF }
func (emptyBody) Close() error             { return nil }

// firstError returns the first of errs that is not nil. The checks it is
// given are pure, so running them all changes nothing but the cost.
func firstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// repoURL is the repository's API URL, escaped as the package doc says
// ("One host").
func (c *Client) repoURL(b Binding) string {
	return c.base.String() + "/repos/" + url.PathEscape(b.Owner) + "/" + url.PathEscape(b.Repo)
}

// escapeSegments escapes each '/'-separated segment of a validated path with
// url.PathEscape and joins them with a literal '/', so a segment can never
// contribute a separator, a query or a fragment.
func escapeSegments(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}
