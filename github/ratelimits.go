package github

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// secondaryCoolDown is how long a secondary rate limit charged to one
// tenant holds the rest of its installation: long enough that the requests
// other tenants have queued do not all land on a limited installation, short
// enough that they are not refused for the limited tenant's Retry-After.
const secondaryCoolDown = 5 * time.Second

// rateLimits remembers until when GitHub asked us to wait, so that parallel
// and later calls stop too instead of calling a limited installation again
// (GitHub may ban integrations that keep calling). What is held depends on
// what GitHub said and for whom the request was made (Binding.Tenant):
//
//   - A primary limit (x-ratelimit-remaining: 0) is the installation's own
//     hourly budget, shared by every tenant on it: the installation is held
//     until x-ratelimit-reset. So is any limit on a token mint, or on a
//     request made for no tenant.
//   - A secondary limit (403 or 429 with Retry-After, or GitHub's
//     secondary-limit message) on a request made for a tenant holds that
//     tenant on that installation for Retry-After, and the installation for
//     at most secondaryCoolDown. Other tenants then call again.
//   - GitHub counts secondary limits per installation too, so a secondary
//     limit for a second tenant while the first is still held means the
//     installation as a whole is limited: it is held for Retry-After.
type rateLimits struct {
	mu   sync.Mutex
	held map[int64]*backoff // by installation
}

// backoff is what one installation waits for. It exists while a wait runs.
type backoff struct {
	until   time.Time            // the whole installation
	tenants map[string]time.Time // one tenant's secondary limit
}

// check returns a *RateLimitError while b's installation, or b's tenant on
// it, is held.
func (r *rateLimits) check(b Binding, now time.Time) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	bo := r.held[b.InstallationID]
	if bo == nil {
		return nil
	}
	until := bo.until
	if t := bo.tenants[b.Tenant]; b.Tenant != "" && t.After(until) {
		until = t
	}
	if bo.prune(now) {
		delete(r.held, b.InstallationID)
	}
	if !now.Before(until) {
		return nil
	}
	return &RateLimitError{RetryAfter: max(until.Sub(now), minRetryAfter)}
}

// note holds what err, the outcome of one call for b, asks to hold, and
// returns err without the secondary-limit mark.
func (r *rateLimits) note(b Binding, err error, now time.Time) error {
	sl, secondary := err.(*secondaryLimit)
	if secondary {
		err = sl.RateLimitError
	}
	var rl *RateLimitError
	if !errors.As(err, &rl) {
		return err
	}
	until := now.Add(rl.RetryAfter)
	r.mu.Lock()
	defer r.mu.Unlock()
	bo := r.held[b.InstallationID]
	if bo == nil {
		bo = &backoff{tenants: map[string]time.Time{}}
		r.held[b.InstallationID] = bo
	}
	bo.prune(now)
	switch {
	case !secondary || b.Tenant == "" || bo.holdsOther(b.Tenant, now):
		bo.until = later(bo.until, until)
	default:
		bo.tenants[b.Tenant] = later(bo.tenants[b.Tenant], until)
		bo.until = later(bo.until, now.Add(min(rl.RetryAfter, secondaryCoolDown)))
	}
	return err
}

// holdsOther reports whether a tenant other than tenant is held at now.
func (bo *backoff) holdsOther(tenant string, now time.Time) bool {
	for t, until := range bo.tenants {
		if t != tenant && now.Before(until) {
			return true
		}
	}
	return false
}

// prune forgets the waits that are over at now and reports whether none is
// left. The tenants held on one installation are the few GitHub limited in
// the last hour at most, so the walk is short.
func (bo *backoff) prune(now time.Time) (empty bool) {
	for t, until := range bo.tenants {
		if !now.Before(until) {
			delete(bo.tenants, t)
		}
	}
	return !now.Before(bo.until) && len(bo.tenants) == 0
}

// secondaryLimit marks a secondary rate limit answered to a contents or ref
// request (checkAnswer), until note has charged it and removed the mark.
type secondaryLimit struct{ *RateLimitError }

func (e *secondaryLimit) Unwrap() error { return e.RateLimitError }

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// isRateLimit tells a rate-limited 403 from a permission 403, as go-github's
// CheckResponse does: the primary limit sets x-ratelimit-remaining to 0; a
// secondary limit sends Retry-After, or says so in the message or the
// documentation URL.
func isRateLimit(resp *http.Response) bool {
	if resp.Header.Get("X-RateLimit-Remaining") == "0" || resp.Header.Get("Retry-After") != "" {
		return true
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	var e struct {
		Message          string `json:"message"`
		DocumentationURL string `json:"documentation_url"`
	}
	if json.Unmarshal(body, &e) != nil {
		return false
	}
	return strings.Contains(strings.ToLower(e.Message), "secondary rate limit") ||
		strings.Contains(e.DocumentationURL, "secondary-rate-limits") ||
		strings.Contains(e.DocumentationURL, "abuse-rate-limits")
}

// retryAfter computes the wait from Retry-After (seconds or an HTTP date),
// else x-ratelimit-reset when the primary limit is exhausted, else 60 s,
// clamped to [1 s, 1 h].
func retryAfter(h http.Header, now time.Time) time.Duration {
	d := defaultRetryAfter
	if v := h.Get("Retry-After"); v != "" {
		if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
			d = time.Duration(min(secs, int64(maxRetryAfter/time.Second))) * time.Second
		} else if t, err := http.ParseTime(v); err == nil {
			d = t.Sub(now)
		}
	} else if h.Get("X-RateLimit-Remaining") == "0" {
		if reset, err := strconv.ParseInt(h.Get("X-RateLimit-Reset"), 10, 64); err == nil {
			d = time.Unix(reset, 0).Sub(now)
		}
	}
	return min(max(d, minRetryAfter), maxRetryAfter)
}
