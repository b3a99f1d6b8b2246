// Package github reads allowlisted documents and branch heads from GitHub as
// a GitHub App installation (docs/design.md §10). It is the only package that
// talks to GitHub.
//
// # What it guarantees
//
//   - One host. Requests go to https://api.github.com; only Go code (tests)
//     can replace the base URL, and it must be https. The installation token
//     is attached only to URLs on that origin, built here from validated
//     parts: owner, repository, every path segment and every branch segment
//     are escaped one by one with url.PathEscape and joined with a literal
//     '/'; path.Join and URL.JoinPath, which resolve "..", are never used.
//   - Validation before I/O. Owner, repository, path (ValidatePath), branch
//     (ValidateBranch) and commit SHA (ValidateCommitSHA) are checked before
//     any request, so a stored row that was tampered with cannot reach
//     GitHub.
//   - No redirects. The HTTP client never follows one; any 3xx is
//     ErrRedirectRejected, so neither the request nor its token moves to
//     another host.
//   - Bounded reads. A contents body is read through a limit of
//     MaxContentsResponse bytes: a larger Content-Length fails before the
//     body is read, and a missing or false one cannot get past the limit
//     (ErrResponseTooLarge). Every call has a deadline (Config.Timeout,
//     default 15 s) covering the token mint and the one retry.
//   - One request per read. GetFile makes exactly one contents request; the
//     only second one follows a 401 on a cached installation token (drop it,
//     mint, retry once). 5xx and connection errors are not retried here.
//   - Verified content. A File is returned only for type "file" with the
//     requested path, size ≤ MaxFileSize (checked before decoding), base64
//     that decodes to exactly size bytes, a git blob SHA-1 equal to the
//     reported sha, and valid UTF-8 without NUL. Directories, symlinks and
//     submodules are ErrNotFile.
//   - One way to read a file. GetFile returns the verified file and the
//     SHA-256 of its content, in memory the caller owns. The answer is read
//     into a buffer of its own, decoded in place and hashed in the caller's
//     goroutine; no buffer that held one read's document is ever handed to
//     another read.
//   - Least-privilege tokens. Installation tokens are minted with exactly one
//     repository (repository_ids when the ID is known, else the name; never
//     an empty list, which would mean every repository) and
//     {"contents":"read"}; an answer granting more, or another repository, is
//     refused. Tokens are cached per (installation, repository) until 5
//     minutes before expires_at, and concurrent mints for one key collapse
//     into one request.
//   - Rate limits are respected. After a primary limit the installation,
//     and after a secondary limit the tenant it was answered to (the rest of
//     the installation briefly), is not called again until the retry time
//     has passed (ratelimits.go).
//   - No secrets out. Tokens, JWTs, the key, Authorization headers, response
//     bodies, document content and download_url never appear in logs or in
//     returned errors; errors carry fixed descriptions.
//   - Stable errors. Every error wraps exactly one sentinel (see errors.go
//     for the code each maps to).
//
// # What the caller must do
//
// Read the App key from a protected file (mode & 0o077 == 0, a regular file
// owned by the running user) and pass the bytes to ParseAppKey; resolve a
// project's source to a Binding, path and commit from its own records; never
// pass a model-supplied owner, repository, path or ref; map errors with
// errors.Is against the sentinels.
//
// # Residual risk: symlinks GitHub follows
//
// For a symlink to a regular file in the same repository, GitHub answers
// with type "file" and the target's content. In every response shape seen so
// far (github-mcp-server fixtures) the answer keeps the link's path and
// blob SHA, so the blob-SHA check fails (ErrInconsistent); if GitHub
// reported the target's path, the path check would fail. If GitHub ever
// reported the requested path with the target's blob SHA, the link would be
// read as the file it points to. The target is still a file of the same
// repository at the same commit, read with a token for that repository only.
// A tree lookup (mode 120000) would close the gap at the cost of a second
// request per read; F1 does not make it.
package github
