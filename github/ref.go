package github

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// ResolveBranch returns the commit SHA that branch points to in b's
// repository (for dispatch, not document reads), from GET
// /repos/{owner}/{repo}/git/ref/heads/{branch}: a tag of the same name is
// never used. The answer must name exactly refs/heads/<branch> and a commit
// with a 40-hex SHA (else ErrInconsistent). Validation, retry and rate-limit
// rules are those of GetFile.
func (c *Client) ResolveBranch(ctx context.Context, b Binding, branch string) (commitSHA string, err error) {
	return get(ctx, c, b, "github: resolve branch", ValidateBranch(branch),
		"git_ref", "/git/ref/heads/"+escapeSegments(branch), "application/vnd.github+json", maxRefResponse,
		func(body []byte) (string, error) { return decodeRef(body, branch) })
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

// ValidateBranch checks a branch name with the rules of
// `git check-ref-format --branch`, made stricter as the cases below say. A
// name starting with "refs/" is refused: callers pass a plain branch name,
// and tags are never accepted (resolution only looks under refs/heads/).
// The error wraps ErrBranchInvalid.
func ValidateBranch(b string) error {
	bad := func(why string) error { return &RuleError{Kind: ErrBranchInvalid, Rule: why} }
	switch {
	case b == "":
		return bad("empty")
	case len(b) > MaxBranchBytes:
		return bad(fmt.Sprintf("longer than %d bytes", MaxBranchBytes))
	case !utf8.ValidString(b):
		return bad("not valid UTF-8")
	case strings.HasPrefix(b, "refs/"):
		return bad(`starts with "refs/"; give the branch name only`)
	case b == "@" || b == "HEAD":
		return bad(fmt.Sprintf("%q is not a branch name", b))
	case b[0] == '-':
		return bad(`starts with "-"`)
	case hasControl(b):
		return bad("contains a control character")
	case hasInvisible(b):
		return bad(invisible)
	case strings.ContainsAny(b, " ~^:?*[\\"):
		return bad(`contains one of space ~ ^ : ? * [ \`)
	case strings.Contains(b, ".."):
		return bad(`contains ".."`)
	case strings.Contains(b, "@{"):
		return bad(`contains "@{"`)
	case strings.HasSuffix(b, "."):
		return bad(`ends with "."`)
	}
	for i, seg := range strings.Split(b, "/") {
		switch {
		case seg == "":
			return bad(fmt.Sprintf("segment %d is empty", i+1))
		case seg[0] == '.':
			return bad(fmt.Sprintf(`segment %d starts with "."`, i+1))
		case strings.HasSuffix(seg, ".lock"):
			return bad(fmt.Sprintf(`segment %d ends with ".lock"`, i+1))
		}
	}
	return nil
}
