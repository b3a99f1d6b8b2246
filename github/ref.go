package github

import (
	"context"
	"encoding/json"
	"fmt"
)

// ResolveBranch (the dispatch path, not a document read) returns the commit SHA that branch points to in b's
// repository, from GET /repos/{owner}/{repo}/git/ref/heads/{branch}. Only
// refs/heads/ is consulted, so a tag of the same name is never used. The
// answer must name exactly refs/heads/<branch> and a commit with a 40-hex
// SHA (else ErrInconsistent). Invalid names fail with ErrBranchInvalid or
// ErrInvalidName before any request. Retry and rate-limit rules are those
// of GetFile.
func (c *Client) ResolveBranch(ctx context.Context, b Binding, branch string) (commitSHA string, err error) {
	const op = "github: resolve branch"
	if err := firstError(ValidateOwner(b.Owner), ValidateRepo(b.Repo), ValidateBranch(branch),
		c.configured(b)); err != nil {
		return "", withOp(op, err)
	}
	u := c.repoURL(b) + "/git/ref/heads/" + escapeSegments(branch)
	err = c.call(ctx, b, "git_ref", u, "application/vnd.github+json", maxRefResponse,
		func(body []byte) (err error) {
			commitSHA, err = decodeRef(body, branch)
			return err
		})
	if err != nil {
		return "", withOp(op, err)
	}
	return commitSHA, nil
}

// decodeRef checks a git/ref response for branch and returns its commit SHA.
func decodeRef(body []byte, branch string) (string, error) {
	var r struct {
		Ref    string `json:"ref"`
		Object struct {
			Type string `json:"type"`
			SHA  string `json:"sha"`
		} `json:"object"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return "", fmt.Errorf("%w: malformed ref JSON", ErrUnavailable)
	}
	if r.Ref != "refs/heads/"+branch {
		return "", fmt.Errorf("%w: response names another ref", ErrInconsistent)
	}
	if r.Object.Type != "commit" {
		return "", fmt.Errorf("%w: branch does not point to a commit", ErrInconsistent)
	}
	if !isSHA1Hex(r.Object.SHA) {
		return "", fmt.Errorf("%w: commit SHA is not 40 lowercase hex", ErrInconsistent)
	}
	return r.Object.SHA, nil
}
