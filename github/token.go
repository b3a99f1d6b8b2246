package github

import (
	"bytes"
	"context"
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Installation tokens live one hour. A cached token is replaced this long
// before its expires_at, so a request never leaves with a token that could
// expire in flight; the cap guards against an expires_at far in the future.
const (
	tokenRefreshMargin = 5 * time.Minute
	tokenMaxCache      = 55 * time.Minute
	maxTokenBytes      = 8 << 10
	maxCachedTokens    = 4096
)

// tokenKey identifies one cached installation token: one installation, one
// repository. Tokens are never shared between repositories, so a token can
// only ever read the repository it was minted for.
type tokenKey struct {
	installation int64
	owner, repo  string
	repositoryID int64
}

type cachedToken struct {
	value     string
	refreshAt time.Time
	expiresAt time.Time
}

// mintCall is one mint in flight; everyone wanting the same key waits on it.
type mintCall struct {
	done  chan struct{}
	value string
	err   error
}

// tokenCache holds installation tokens and collapses concurrent mints for
// the same key into one request.
type tokenCache struct {
	mu       sync.Mutex
	tokens   map[tokenKey]cachedToken
	inflight map[tokenKey]*mintCall
}

func keyFor(b Binding) tokenKey {
	return tokenKey{installation: b.InstallationID, owner: b.Owner, repo: b.Repo, repositoryID: b.RepositoryID}
}

// token returns an installation token for b. fresh reports whether it was
// minted for this call (so a 401 with it is final) rather than taken from the
// cache (so a 401 may mean it was revoked, and one retry is allowed).
func (c *Client) token(ctx context.Context, b Binding) (value string, fresh bool, err error) {
	key := keyFor(b)
	c.tokens.mu.Lock()
	if t, ok := c.tokens.tokens[key]; ok && c.cfg.Now().Before(t.refreshAt) {
		c.tokens.mu.Unlock()
		return t.value, false, nil
	}
	call, ok := c.tokens.inflight[key]
	if !ok {
		call = &mintCall{done: make(chan struct{})}
		c.tokens.inflight[key] = call
		// The mint runs on its own deadline, detached from this caller's
		// cancellation, so one impatient caller cannot fail the others
		// waiting on the same mint.
		go c.runMint(context.WithoutCancel(ctx), key, b, call)
	}
	c.tokens.mu.Unlock()
	select {
	case <-call.done:
		return call.value, true, call.err
	case <-ctx.Done():
		return "", false, fmt.Errorf("%w: waiting for token: %s", ErrUnavailable, transportError(ctx, ctx.Err()))
	}
}

func (c *Client) runMint(ctx context.Context, key tokenKey, b Binding, call *mintCall) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	tok, err := c.mint(ctx, b)
	c.tokens.mu.Lock()
	if err == nil && c.cfg.Now().Before(tok.refreshAt) {
		if len(c.tokens.tokens) >= maxCachedTokens {
			c.tokens.evictExpired(c.cfg.Now())
		}
		c.tokens.tokens[key] = tok
	}
	delete(c.tokens.inflight, key)
	c.tokens.mu.Unlock()
	call.value, call.err = tok.value, err
	close(call.done)
}

// evictExpired drops expired tokens; t.mu must be held.
func (t *tokenCache) evictExpired(now time.Time) {
	for k, v := range t.tokens {
		if !now.Before(v.refreshAt) {
			delete(t.tokens, k)
		}
	}
}

// dropToken forgets b's cached token if it is still value (another caller
// may already have replaced it).
func (c *Client) dropToken(b Binding, value string) {
	key := keyFor(b)
	c.tokens.mu.Lock()
	if t, ok := c.tokens.tokens[key]; ok && t.value == value {
		delete(c.tokens.tokens, key)
	}
	c.tokens.mu.Unlock()
}

// mint asks GitHub for an installation token scoped to b's one repository
// with contents:read, and checks that the answer is no broader than that.
func (c *Client) mint(ctx context.Context, b Binding) (cachedToken, error) {
	body := struct {
		Repositories  []string          `json:"repositories,omitempty"`
		RepositoryIDs []int64           `json:"repository_ids,omitempty"`
		Permissions   map[string]string `json:"permissions"`
	}{Permissions: map[string]string{"contents": "read"}}
	// Exactly one repository, always: an empty or absent list would mint a
	// token for every repository of the installation.
	switch {
	case b.RepositoryID > 0:
		body.RepositoryIDs = []int64{b.RepositoryID}
	case b.Repo != "":
		body.Repositories = []string{b.Repo}
	default:
		return cachedToken{}, fmt.Errorf("%w: no repository to scope the token to", ErrInvalidName)
	}
	payload, err := json.Marshal(body)
	if err != nil {
		return cachedToken{}, fmt.Errorf("%w: encoding mint request", ErrUnavailable)
	}
	jwt, err := signAppJWT(c.cfg.Key, c.cfg.AppID, c.cfg.Now())
	if err != nil {
		return cachedToken{}, fmt.Errorf("%w: signing App JWT failed", ErrUnconfigured)
	}
	u := c.base.String() + "/app/installations/" + strconv.FormatInt(b.InstallationID, 10) + "/access_tokens"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(payload))
	if err != nil {
		return cachedToken{}, fmt.Errorf("%w: building mint request", ErrUnconfigured)
	}
	req.Header.Set("Accept", "application/vnd.github+json")
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.send(ctx, "access_tokens", req, jwt)
	if err != nil {
		return cachedToken{}, fmt.Errorf("%w: minting token: %s", ErrUnreachable, transportError(ctx, err))
	}
	defer resp.Body.Close()
	if code := resp.StatusCode; code != http.StatusCreated && code != http.StatusOK {
		// A refused mint means the App cannot reach this repository through
		// this installation: wrong key or App ID (401), a suspended
		// installation (403), an unknown installation (404), a repository
		// outside it (422). Rate limits and outages keep their own codes.
		if code == http.StatusNotFound || code == http.StatusUnprocessableEntity {
			return cachedToken{}, fmt.Errorf("%w: token mint refused with status %d", ErrForbidden, code)
		}
		return cachedToken{}, checkStatus(resp, c.cfg.Now())
	}
	raw, err := readBody(resp, maxMintResponse)
	if err != nil {
		return cachedToken{}, err
	}
	tok, err := c.checkMint(raw, b)
	if err != nil {
		return cachedToken{}, err
	}
	if c.cfg.OnMint != nil {
		c.cfg.OnMint()
	}
	c.cfg.Logger.InfoContext(ctx, "github token minted", "installation", b.InstallationID,
		"owner", b.Owner, "repo", b.Repo, "expires_at", tok.expiresAt)
	return tok, nil
}

// checkMint validates a mint response: a plausible token, a parseable
// expires_at in the future, read-only permissions, and exactly the one
// repository asked for.
func (c *Client) checkMint(raw []byte, b Binding) (cachedToken, error) {
	var r struct {
		Token               string            `json:"token"`
		ExpiresAt           string            `json:"expires_at"`
		Permissions         map[string]string `json:"permissions"`
		RepositorySelection string            `json:"repository_selection"`
		Repositories        []struct {
			ID   int64  `json:"id"`
			Name string `json:"name"`
		} `json:"repositories"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return cachedToken{}, fmt.Errorf("%w: malformed token response", ErrUnavailable)
	}
	if r.Token == "" || len(r.Token) > maxTokenBytes || !isHeaderSafe(r.Token) {
		return cachedToken{}, fmt.Errorf("%w: token response without a usable token", ErrInconsistent)
	}
	exp, err := time.Parse(time.RFC3339, r.ExpiresAt)
	now := c.cfg.Now()
	if err != nil || !exp.After(now) {
		return cachedToken{}, fmt.Errorf("%w: token response with a bad expires_at", ErrInconsistent)
	}
	for _, level := range r.Permissions {
		if level != "read" {
			return cachedToken{}, fmt.Errorf("%w: token has a permission above read", ErrInconsistent)
		}
	}
	if r.RepositorySelection != "selected" || len(r.Repositories) != 1 {
		return cachedToken{}, fmt.Errorf("%w: token not scoped to exactly one repository", ErrInconsistent)
	}
	// The name as well as the ID: reads go to /repos/{owner}/{repo} by name,
	// so a token minted for the linked ID is used only while that ID still
	// bears the linked name. After a rename, the name may lead to a new
	// repository that took it over; the link must be updated instead.
	got := r.Repositories[0]
	if (b.RepositoryID > 0 && got.ID != b.RepositoryID) || !strings.EqualFold(got.Name, b.Repo) {
		return cachedToken{}, fmt.Errorf("%w: token scoped to another repository, or the linked one was renamed", ErrInconsistent)
	}
	refreshAt := exp.Add(-tokenRefreshMargin)
	if limit := now.Add(tokenMaxCache); refreshAt.After(limit) {
		refreshAt = limit
	}
	return cachedToken{value: r.Token, refreshAt: refreshAt, expiresAt: exp}, nil
}

// isHeaderSafe reports whether s is visible ASCII without spaces, so it can
// sit in an Authorization header without changing its meaning.
func isHeaderSafe(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return r <= ' ' || r >= 0x7f }) < 0
}

// JWT timing (GitHub "Generating a JSON Web Token for a GitHub App"): iat is
// set in the past to absorb clock drift between us and GitHub; exp stays well
// inside GitHub's 10-minute maximum so a clock running slightly ahead of
// GitHub's is still accepted.
const (
	jwtBackdate = 60 * time.Second
	jwtLifetime = 5 * time.Minute
)

// jwtHeader is the fixed, pre-encoded header: RS256 is the only algorithm
// GitHub accepts for App JWTs, so nothing here is negotiable.
var jwtHeader = base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"RS256","typ":"JWT"}`))

// signAppJWT returns an RS256 JWT issued by appID (a numeric App ID or a
// client ID). PKCS #1 v1.5 signatures are deterministic (nil rand), which
// keeps the output testable against fixed vectors. The result is a
// credential: callers never log it or put it in an error.
func signAppJWT(key *rsa.PrivateKey, appID string, now time.Time) (string, error) {
	claims, err := json.Marshal(struct {
		IAT int64  `json:"iat"` // whole seconds: GitHub rejects fractional times
		EXP int64  `json:"exp"`
		ISS string `json:"iss"`
	}{now.Add(-jwtBackdate).Unix(), now.Add(jwtLifetime).Unix(), appID})
	if err != nil {
		return "", err
	}
	signingInput := jwtHeader + "." + base64.RawURLEncoding.EncodeToString(claims)
	sum := sha256.Sum256([]byte(signingInput))
	sig, err := rsa.SignPKCS1v15(nil, key, crypto.SHA256, sum[:])
	if err != nil {
		return "", err
	}
	return signingInput + "." + base64.RawURLEncoding.EncodeToString(sig), nil
}
