package server

import (
	"errors"

	"heyaira/github"
)

// githubFailure gives a GitHub rate limit, whether GitHub just answered it
// or the client still holds it (github/ratelimits.go), its wait as
// retry_after_seconds beside the stable provider_rate_limited code. Any
// other error passes unchanged.
func githubFailure(err error) error {
	var rl *github.RateLimitError
	if !errors.As(err, &rl) {
		return err
	}
	code, public := classify(err)
	return &fieldsError{err: &codedError{code, public}, fields: retryFields(rl.RetryAfter)}
}
