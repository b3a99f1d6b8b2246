package oauth

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// Bounds on registered redirect URIs (docs/design.md §8, OA-03).
const (
	MaxRedirectURIs   = 10
	MaxRedirectURILen = 2000
)

// ErrInvalidRedirectURI is returned (wrapped, with the reason) by
// ValidateRedirectURI for any URI that is not allowed.
var ErrInvalidRedirectURI = errors.New("oauth: invalid redirect URI")

// ErrDotlessScheme is returned (wrapping ErrInvalidRedirectURI) for a
// private-use scheme without a dot, such as "cursor://…". Registration drops
// such a URI when the same request has an acceptable one, because real
// clients send them alongside https and loopback URIs (see docs/oauth.md).
var ErrDotlessScheme = fmt.Errorf("%w: a private-use scheme must contain a dot (RFC 8252 §7.1)", ErrInvalidRedirectURI)

// dangerousSchemes run code or read local data in a browser. They fail a
// whole registration rather than being dropped from it.
var dangerousSchemes = map[string]bool{
	"javascript": true, "data": true, "file": true, "vbscript": true, "blob": true, "about": true,
}

// loopbackHosts are the only hosts an http redirect URI may name. They are
// compared as written: "localhost" and "127.0.0.1" are different hosts.
var loopbackHosts = []string{"127.0.0.1", "[::1]", "localhost"}

func invalidRedirect(reason string) error {
	return fmt.Errorf("%w: %s", ErrInvalidRedirectURI, reason)
}

// ValidateRedirectURI checks a redirect URI a client wants to register. It is
// an allowlist: https with a host; http on a loopback host (any port); or a
// private-use scheme containing a dot. It refuses fragments, user info,
// percent signs and backslashes in the authority, and any byte outside
// printable ASCII, because browsers and parsers disagree on those (the
// "javascript:" blocklist bypasses of workers-oauth-provider#97, the
// "localhost%25@evil" trick of zitadel#12559).
func ValidateRedirectURI(s string) error {
	switch {
	case s == "":
		return invalidRedirect("empty")
	case len(s) > MaxRedirectURILen:
		return invalidRedirect(fmt.Sprintf("longer than %d bytes", MaxRedirectURILen))
	case unprintable(s, ""):
		return invalidRedirect("contains a space, control or non-ASCII character")
	case strings.ContainsAny(s, "#\\"):
		return invalidRedirect("contains a fragment or backslash")
	}
	scheme, rest, ok := strings.Cut(s, ":")
	if !ok || !validScheme(scheme) {
		return invalidRedirect("not an absolute URI with a lower-case scheme")
	}
	if _, err := url.Parse(s); err != nil {
		return invalidRedirect("not a valid URI")
	}
	if scheme == "https" || scheme == "http" {
		host, err := splitAuthority(rest)
		switch {
		case err != nil:
			return err
		case scheme == "https" && host == "":
			return invalidRedirect("https URI without a host")
		case scheme == "http" && !isLoopbackHost(host):
			return invalidRedirect("http is allowed only on 127.0.0.1, [::1] or localhost")
		}
		return nil
	}
	switch {
	case dangerousSchemes[scheme]:
		return invalidRedirect("scheme " + scheme + " is never a redirect target")
	case !strings.Contains(scheme, "."):
		return ErrDotlessScheme
	case strings.HasPrefix(rest, "//"):
		_, err := splitAuthority(rest)
		return err
	}
	return nil
}

// validScheme: RFC 3986 §3.1, restricted to lower case so that comparisons
// stay exact.
func validScheme(s string) bool {
	return s != "" && s[0] >= 'a' && s[0] <= 'z' && only(s, lower+digits+"+-.")
}

// splitAuthority takes what follows "scheme:" and returns the host (with
// brackets for IPv6). It requires "//", refuses user info and percent signs
// in the authority, and checks the port.
func splitAuthority(rest string) (host string, err error) {
	if !strings.HasPrefix(rest, "//") {
		return "", invalidRedirect("missing //authority")
	}
	auth := rest[2:]
	if i := strings.IndexAny(auth, "/?"); i >= 0 {
		auth = auth[:i]
	}
	if strings.ContainsAny(auth, "@%") {
		return "", invalidRedirect("user info or percent-encoding in the authority")
	}
	host, port := auth, ""
	if strings.HasPrefix(auth, "[") {
		end := strings.IndexByte(auth, ']')
		if end < 0 {
			return "", invalidRedirect("unterminated IPv6 literal")
		}
		host, port = auth[:end+1], auth[end+1:]
	} else if i := strings.IndexByte(auth, ':'); i >= 0 {
		host, port = auth[:i], auth[i:]
	}
	if port != "" {
		n, err := strconv.Atoi(port[1:])
		if port[0] != ':' || err != nil || n < 1 || n > 65535 || strconv.Itoa(n) != port[1:] {
			return "", invalidRedirect("malformed port")
		}
	}
	if !validHost(host) {
		return "", invalidRedirect("malformed host")
	}
	return host, nil
}

// validHost accepts a bracketed IPv6 literal or a reg-name/IPv4 of letters,
// digits, '-' and '.'.
func validHost(h string) bool {
	if strings.HasPrefix(h, "[") {
		return len(h) >= 3 && h[len(h)-1] == ']' && only(h[1:len(h)-1], digits+"abcdefABCDEF:.")
	}
	return h != "" && len(h) <= 253 && only(h, alnum+"-.")
}

// Character classes for only.
const (
	lower  = "abcdefghijklmnopqrstuvwxyz"
	digits = "0123456789"
	alnum  = lower + "ABCDEFGHIJKLMNOPQRSTUVWXYZ" + digits
)

// only reports whether every byte of s is one of the ASCII bytes in set.
func only(s, set string) bool { return strings.Trim(s, set) == "" }

// unprintable reports whether s holds a space, a control or non-ASCII byte,
// or one of the bytes in also.
func unprintable(s, also string) bool {
	return strings.IndexFunc(s, func(r rune) bool {
		return r <= 0x20 || r >= 0x7f || strings.ContainsRune(also, r)
	}) >= 0
}

func isLoopbackHost(h string) bool { return slices.Contains(loopbackHosts, h) }

// loopbackParts splits a valid http loopback URI into host and
// everything after the authority (path and query). ok is false for any
// other URI.
func loopbackParts(s string) (host, tail string, ok bool) {
	rest, found := strings.CutPrefix(s, "http://")
	if !found || ValidateRedirectURI(s) != nil {
		return "", "", false
	}
	auth, tail := rest, ""
	if i := strings.IndexAny(rest, "/?"); i >= 0 {
		auth, tail = rest[:i], rest[i:]
	}
	host, err := splitAuthority("//" + auth)
	if err != nil || !isLoopbackHost(host) {
		return "", "", false
	}
	return host, tail, true
}

// MatchRedirectURI reports whether requested may be used as the redirect of
// a client that registered the given URIs. The comparison is exact string
// equality, with one exception (RFC 8252 §7.3): an http loopback URI
// matches a registered http loopback URI that differs only in its port
// (present, absent or different). Host, path and query must still be equal
// byte for byte.
func MatchRedirectURI(registered []string, requested string) bool {
	if slices.Contains(registered, requested) {
		return true
	}
	host, tail, ok := loopbackParts(requested)
	if !ok {
		return false
	}
	for _, r := range registered {
		if rh, rt, ok := loopbackParts(r); ok && rh == host && rt == tail {
			return true
		}
	}
	return false
}

// IsLoopbackRedirect reports whether s is an http loopback redirect URI,
// which any local program can listen on: the consent page warns about it.
func IsLoopbackRedirect(s string) bool {
	_, _, ok := loopbackParts(s)
	return ok
}

// RedirectHost returns what the consent page shows as the redirect's
// destination: the host (with port) for http and https URIs, otherwise the
// scheme of the private-use URI.
func RedirectHost(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return ""
	}
	if u.Scheme == "http" || u.Scheme == "https" {
		return u.Host
	}
	return u.Scheme + ":"
}
