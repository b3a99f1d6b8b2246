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
//   - Validation before I/O. Owner, repository, path, branch and commit SHA
//     are checked before any request, so a stored row that was tampered with
//     cannot reach GitHub.
//   - No redirects. Any 3xx is ErrRedirectRejected, so neither the request
//     nor its token moves to another host.
//   - Bounded reads. A contents body is read through a limit of
//     MaxContentsResponse bytes, whatever its Content-Length says
//     (ErrResponseTooLarge). Every call has a deadline (Config.Timeout)
//     covering the token mint and the one retry.
//   - One request per read. GetFile makes exactly one contents request; the
//     only second one follows a 401 on a cached installation token (drop it,
//     mint, retry once). 5xx and connection errors are not retried here.
//   - Verified content. A File is returned only once its type, path, size,
//     base64, git blob SHA-1 and UTF-8 are verified (decodeContents).
//     Directories, symlinks and submodules are ErrNotFile.
//   - One way to read a file. GetFile returns the verified file and the
//     SHA-256 of its content, decoded in place in a buffer of its own and
//     hashed in the caller's goroutine; no buffer that held one read's
//     document is ever handed to another read.
//   - Least-privilege tokens. Installation tokens are minted for exactly one
//     repository (never an empty list, which would mean every repository)
//     with {"contents":"read"}, cached per installation and repository; an
//     answer granting more, or another repository, is refused (token.go).
//   - Rate limits are respected. While GitHub's primary or secondary limit
//     holds, no request is sent (ratelimits.go).
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
// read as the file it points to: still a file of the same repository at the
// same commit, read with a token for that repository only. A tree lookup
// (mode 120000) would close the gap at the cost of a second request per
// read; F1 does not make it.
package github
