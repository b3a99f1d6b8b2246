package oauth

import (
	"errors"
	"net/netip"
	"net/url"
	"strings"
)

// MaxClientIDURL bounds a client ID metadata document URL. The published
// ones are under 60 bytes; 512 leaves room and keeps the rows small.
const MaxClientIDURL = 512

// Client ID URL refusals. Each is a stable reason shown on the error page;
// none quotes the input.
var (
	ErrClientIDURL     = errors.New("cimd_url_invalid")
	ErrClientIDQuery   = errors.New("cimd_url_query")
	ErrClientIDDotPath = errors.New("cimd_url_dot_segment")
)

// IsClientIDURL reports whether a client_id is meant as a metadata document
// URL rather than a registered id: it starts with "https://" (in any case,
// so that "HTTPS://" is refused by CheckClientIDURL, not looked up).
func IsClientIDURL(id string) bool {
	return len(id) >= 8 && strings.EqualFold(id[:8], "https://")
}

// CheckClientIDURL is the gate a client_id URL passes before any network
// I/O (draft-ietf-oauth-client-id-metadata-document §3). It works on the raw
// string, because URL parsers normalise: they collapse "/a/../b", accept a
// backslash for a slash, or lower-case the host. It returns the host.
//
// Accepted: "https://" + a host name (lower case, with a letter, not an IP
// literal) + an optional ":443" + a path of at least one non-empty segment,
// none of them "." or ".." even after percent-decoding, in printable ASCII;
// nothing else. An "@" is refused anywhere, in a path too, where no client
// needs one, so that no URL parser can disagree about where the host ends.
// A query is refused because none of the published documents of the clients
// HeyAira serves (Claude Code, claude.ai, VS Code, Codex; see
// docs/oauth.md) has one, and the draft says a client ID SHOULD NOT.
func CheckClientIDURL(s string) (string, error) {
	if len(s) > MaxClientIDURL || unprintable(s, `\#@`) {
		return "", ErrClientIDURL
	}
	rest, ok := strings.CutPrefix(s, "https://")
	slash := strings.IndexAny(rest, "/?")
	if !ok || slash < 0 || rest[slash] == '?' {
		return "", ErrClientIDURL // not https, no path, or a query with no path
	}
	host, path := rest[:slash], rest[slash:]
	host, _ = strings.CutSuffix(host, ":443")
	_, ipErr := netip.ParseAddr(host) // nil for an IP literal, which is refused
	if host == "" || strings.ContainsAny(host, ":[]%") || !validHost(host) || strings.ToLower(host) != host ||
		ipErr == nil || only(host, digits+".") || path == "/" {
		return "", ErrClientIDURL
	}
	if strings.ContainsRune(path, '?') {
		return "", ErrClientIDQuery
	}
	for _, seg := range strings.Split(path[1:], "/") {
		dec, err := url.PathUnescape(seg)
		if err != nil || seg == "" {
			return "", ErrClientIDURL
		}
		if dec == "." || dec == ".." {
			return "", ErrClientIDDotPath
		}
		if unprintable(dec, `/\`) {
			return "", ErrClientIDURL
		}
	}
	return host, nil
}
