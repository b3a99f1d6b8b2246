package oauth

import (
	"html/template"
	"io"
	"net/url"
	"strings"
)

// AuthorizeErrorPage answers an authorization request that names a
// registered client and redirect URI but is otherwise invalid. It is shown
// instead of redirecting: the request came before the user did anything,
// and anyone can register a client, so an automatic redirect would be an
// open redirect (RFC 9700 §4.11.2). The page names the client and its
// redirect host and offers the error redirect as a link the user may follow.
type AuthorizeErrorPage struct {
	ClientID     string
	ClientName   string // as registered; passed through DisplayText
	RedirectURI  string
	RedirectHost string
	Reason       string // the error_description, in plain words
	Link         string // the registered redirect URI with error, state and iss
}

// Render writes the page. Link is a registered redirect URI (validated at
// registration, no dangerous scheme) plus a query this server built, so it
// is passed as a URL that html/template keeps even for a private-use scheme.
func (p AuthorizeErrorPage) Render(w io.Writer) error {
	if p.ClientName = DisplayText(p.ClientName); p.ClientName == "" {
		p.ClientName = "an unnamed application"
	}
	link := template.URL(p.Link)
	if u, err := url.Parse(p.Link); err != nil || dangerousSchemes[strings.ToLower(u.Scheme)] {
		link = "" // never registered; kept out even so
	}
	return pages.ExecuteTemplate(w, "authorize_error", struct {
		AuthorizeErrorPage
		Link template.URL
	}{p, link})
}
