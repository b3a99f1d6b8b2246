// Package publicurl checks HEYAIRA_PUBLIC_URL, the one URL both halves of the
// binary build on: serve makes it the OAuth issuer, the tokens' audience and
// the Origin /mcp allows, and heyaira-admin signin-link prints links on it.
package publicurl

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
)

// Default is the URL when HEYAIRA_PUBLIC_URL is unset.
const Default = "http://127.0.0.1:8080"

// Check returns v (Default when empty) without a trailing slash, or why it
// cannot be served.
func Check(v string) (string, error) {
	if v == "" {
		v = Default
	}
	v = strings.TrimRight(v, "/")
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" ||
		u.RawQuery != "" || u.Fragment != "" || u.User != nil || strings.ContainsAny(v, "?#") {
		return "", errors.New("HEYAIRA_PUBLIC_URL must be an absolute http(s) URL without query or fragment")
	}
	// The issuer, the MCP resource and every endpoint are this URL plus a
	// fixed path, and the metadata is at the host's root: a base path would
	// put the well-known documents where no client looks.
	if u.Path != "" {
		return "", fmt.Errorf("HEYAIRA_PUBLIC_URL must not have a path (%q): serve HeyAira at the root of its own host name", u.Path)
	}
	// Browsers send Origin, and clients compare the issuer and the resource,
	// in canonical form: lower case, no default port. Any other spelling of
	// the same URL would match none of them.
	if canon := canonicalOrigin(u); v != canon {
		return "", fmt.Errorf("HEYAIRA_PUBLIC_URL must be written in canonical form: %s", canon)
	}
	// OAuth 2.1 allows plain http only for loopback redirect and server
	// addresses; bearer tokens, codes and sign-in links must not cross a
	// network in clear.
	if u.Scheme == "http" && !IsLoopbackName(u.Hostname()) {
		return "", fmt.Errorf("HEYAIRA_PUBLIC_URL uses http on %s, which is not a loopback address: OAuth needs TLS; "+
			"put a TLS-terminating proxy in front and use its https URL", u.Hostname())
	}
	return v, nil
}

// canonicalOrigin is u's scheme and host in lower case, without the
// scheme's default port or an empty one ("host:").
func canonicalOrigin(u *url.URL) string {
	scheme, host := strings.ToLower(u.Scheme), strings.ToLower(u.Hostname())
	if strings.Contains(host, ":") {
		host = "[" + host + "]" // IPv6
	}
	if p := u.Port(); p != "" && !(scheme == "https" && p == "443") && !(scheme == "http" && p == "80") {
		host += ":" + p
	}
	return scheme + "://" + host
}

// IsLoopbackName reports whether a URL host is localhost or a loopback IP.
func IsLoopbackName(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}
