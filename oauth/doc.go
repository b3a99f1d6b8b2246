// Package oauth holds the pure, storage-free parts of HeyAira's OAuth 2.1
// authorization server: PKCE (S256 only), redirect-URI validation and
// matching, scope parsing, secret generation, strict form parsing, the RFC
// 8414 metadata document and the HTML pages of the browser flow.
//
// What it guarantees:
//
//   - Redirect URIs are checked by an allowlist, not a blocklist
//     (ValidateRedirectURI), and matched by byte-exact string comparison
//     (RFC 3986 §6.2.1), except that an http loopback URI matches with any
//     port (MatchRedirectURI, RFC 8252 §7.3). Host names are not
//     canonicalised: "localhost" and "127.0.0.1" are different hosts.
//   - PKCE accepts only S256; a verifier is checked for RFC 7636 syntax
//     before it is hashed, and the comparison is constant-time.
//   - Every secret (token, code, handle, session) carries 256 bits from
//     crypto/rand behind a type prefix, and is meant to be stored only as
//     its SHA-256 (Hash).
//   - Form and query parsing refuses repeated parameters (RFC 6749 §3.1),
//     malformed escapes and semicolons, so two parsers cannot read one
//     request differently.
//   - Pages are rendered with html/template, so client-chosen text (a
//     client_name) is always escaped; bidirectional-override characters are
//     removed from it before display.
//
// What the caller must do: store only hashes, compare secrets with Equal,
// re-derive everything on a consent POST from server-side state, and send
// the page headers (frame-ancestors 'none', X-Frame-Options, no-store).
//
// The package imports only the standard library and no other package of
// this module.
package oauth
