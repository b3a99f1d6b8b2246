package oauth

import (
	"errors"
	"net/url"
	"slices"
	"strings"
)

// MaxParams bounds the number of parameters in one form or query.
const MaxParams = 64

// Errors of ParseForm. They never quote the input, which may hold secrets.
var (
	ErrMalformedForm = errors.New("oauth: malformed form encoding")
	ErrRepeatedParam = errors.New("oauth: a parameter appears more than once")
	ErrTooManyParams = errors.New("oauth: too many parameters")
)

// Form is a parsed application/x-www-form-urlencoded body or query string.
type Form map[string][]string

// Get returns the value of a parameter, or "" when it is absent. RFC 6749
// §3.1: a parameter sent without a value is treated as omitted.
func (f Form) Get(key string) string {
	if v := f[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// Has reports whether the parameter is present with a non-empty value.
func (f Form) Has(key string) bool { return f.Get(key) != "" }

// All returns every value of a parameter that may repeat.
func (f Form) All(key string) []string { return f[key] }

// Unknown returns the first parameter name not in allowed, or "".
func (f Form) Unknown(allowed ...string) string {
	for k := range f {
		if !slices.Contains(allowed, k) {
			return k
		}
	}
	return ""
}

// ParseForm parses raw strictly: every pair must decode (no bad escapes, no
// ';' separators, which net/url also refuses), no parameter may appear twice
// unless it is named in repeatable (RFC 6749 §3.1 forbids repeats, and two
// readers of a repeated parameter may pick different values), and there are
// at most MaxParams pairs. Empty pairs ("a=1&&b=2") are skipped.
func ParseForm(raw string, repeatable ...string) (Form, error) {
	f := Form{}
	n := 0
	for _, pair := range strings.Split(raw, "&") {
		if pair == "" {
			continue
		}
		if n++; n > MaxParams {
			return nil, ErrTooManyParams
		}
		k, v, _ := strings.Cut(pair, "=")
		key, errKey := url.QueryUnescape(k)
		val, errVal := url.QueryUnescape(v)
		if strings.Contains(pair, ";") || errKey != nil || errVal != nil || key == "" {
			return nil, ErrMalformedForm
		}
		if _, dup := f[key]; dup && !slices.Contains(repeatable, key) {
			return nil, ErrRepeatedParam
		}
		f[key] = append(f[key], val)
	}
	return f, nil
}
