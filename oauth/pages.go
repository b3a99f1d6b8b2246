package oauth

import (
	"embed"
	"html/template"
	"io"
	"net/url"
	"strings"
	"unicode"
)

//go:embed templates/*.html
var templateFS embed.FS

// pages is parsed once; html/template escapes every value by context, so
// client-chosen text cannot become markup.
var pages = template.Must(template.ParseFS(templateFS, "templates/*.html"))

// ConsentPage is what the consent page shows. Every field is escaped.
type ConsentPage struct {
	Action       string // form target, PathAuthorize
	ClientID     string
	ClientName   string // as registered; passed through DisplayText
	Principal    string // the signed-in principal's name
	RedirectURI  string
	RedirectHost string
	Loopback     bool // warn: any local program can listen on a loopback redirect
	// A client named by its metadata document URL (CIMD): the URL's host is
	// its identity; AllLoopback warns that every redirect URI it lists is
	// on the user's computer, where any program can claim to be it.
	ClientHost  string
	AllLoopback bool
	Projects    []ProjectChoice
	Scopes      []ScopeChoice // requested scopes other than documents:read
	Documents   *ScopeChoice  // documents:read, when requested: its own fieldset
	Request     string        // the pending request's handle
	CSRF        string
	StepUp      *StepUp // the client comes back for scopes its grant lacks
}

// StepUp is what a request asks beyond the client's existing grant. The
// page leads with it. When documents:read is new, the page has no plain
// Approve: its approve button is its own action that names document
// reading, and the other answer keeps document reading off and sends the
// client access_denied, so the client is never handed a code that sends
// it straight back (docs/oauth.md, "Step-up").
type StepUp struct {
	Project   string   // the project whose grant lacks them; "" when several do
	Documents bool     // documents:read is new
	Others    []string // descriptions of the other new scopes
}

// ProjectChoice is one project the principal may grant access to.
type ProjectChoice struct {
	ID, Name string
	Checked  bool
}

// ScopeChoice is one requested scope, with its own checkbox.
type ScopeChoice struct {
	Name, Description string
	Checked           bool
}

// NewScopeChoices splits requested scopes into the ordinary ones, ticked by
// default, and documents:read, which is never ticked by default: the
// principal must tick it (docs/design.md §8).
func NewScopeChoices(requested []string) (ordinary []ScopeChoice, documents *ScopeChoice) {
	for _, s := range Canonical(requested) {
		c := ScopeChoice{Name: s, Description: Descriptions[s], Checked: s != DocumentsRead}
		if s == DocumentsRead {
			documents = &c
			continue
		}
		ordinary = append(ordinary, c)
	}
	return ordinary, documents
}

func (p ConsentPage) Render(w io.Writer) error {
	p.ClientName = DisplayText(p.ClientName)
	p.Principal = DisplayText(p.Principal)
	for i := range p.Projects {
		p.Projects[i].Name = DisplayText(p.Projects[i].Name)
	}
	if p.StepUp != nil {
		s := *p.StepUp
		s.Project = DisplayText(s.Project)
		p.StepUp = &s
	}
	return pages.ExecuteTemplate(w, "consent", p)
}

// SigninPage is the page behind a one-time link: a button, so that merely
// fetching the link (as mail scanners do) redeems nothing. It says whose
// link it is; when the browser is signed in as someone else it says so, and
// the button becomes an explicit switch.
type SigninPage struct {
	Action    string // form target, "/signin"
	Token     string // the link secret, posted back
	CSRF      string
	Principal string // whose link it is
	Account   string // the principal's account
	SignedIn  string // another principal this browser is signed in as, or ""
}

func (p SigninPage) Render(w io.Writer) error {
	p.Principal, p.Account, p.SignedIn = DisplayText(p.Principal), DisplayText(p.Account), DisplayText(p.SignedIn)
	return pages.ExecuteTemplate(w, "signin", p)
}

// SigninSwitchPage answers a sign-in POST that would have replaced another
// principal's session without the explicit switch.
type SigninSwitchPage struct {
	Principal, SignedIn string
}

func (p SigninSwitchPage) Render(w io.Writer) error {
	p.Principal, p.SignedIn = DisplayText(p.Principal), DisplayText(p.SignedIn)
	return pages.ExecuteTemplate(w, "signin_switch", p)
}

// SigninPromptPage asks a visitor without a session to open their link.
type SigninPromptPage struct {
	Pending bool // an authorization request waits for the sign-in
}

func (p SigninPromptPage) Render(w io.Writer) error {
	return pages.ExecuteTemplate(w, "signin_prompt", p)
}

// SignedInPage tells a principal that they are signed in.
type SignedInPage struct {
	Principal string
}

func (p SignedInPage) Render(w io.Writer) error {
	p.Principal = DisplayText(p.Principal)
	return pages.ExecuteTemplate(w, "signed_in", p)
}

// MessagePage is an error or notice page.
type MessagePage struct {
	Title, Message string
}

func (p MessagePage) Render(w io.Writer) error { return pages.ExecuteTemplate(w, "message", p) }

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

// MaxDisplayText bounds a displayed name, in runes.
const MaxDisplayText = 100

// CleanName removes from client-chosen text what must never be displayed
// beside trusted text: invalid UTF-8 is replaced, and control characters
// and bidirectional controls (such as U+202E RIGHT-TO-LEFT OVERRIDE, which
// can make "evil.com" read as "moc.live") are dropped. It never makes a
// valid UTF-8 string longer. HTML escaping is html/template's job.
func CleanName(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.TrimSpace(strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Bidi_Control, r) {
			return -1
		}
		return r
	}, s))
}

// DisplayText is CleanName cut to MaxDisplayText runes.
func DisplayText(s string) string {
	s = CleanName(s)
	n := 0
	for i := range s {
		if n == MaxDisplayText {
			return s[:i] + "…"
		}
		n++
	}
	return s
}
