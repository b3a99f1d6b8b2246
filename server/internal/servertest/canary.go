package servertest

// The canary scan of LG-01, shared by every server test: New
// registers each token it issues, each cursor and each document fragment a
// tool returns, and when the test ends checks that none of them reached the
// log, in any spelling a log could carry it.

import (
	"encoding/base64"
	"encoding/json"
	"net/url"
	"strings"
	"sync"
)

// canaryMinSubstring is the shortest piece of a secret that counts as a
// leak (docs/security-tests.md LG-01: no substring of 12 or more
// characters of any token may reach a log).
const canaryMinSubstring = 12

// secretForms returns the spellings of a secret to look for: raw, standard
// and URL-safe base64 (padded or not), percent-encoded (query and path),
// JSON-escaped, and every substring of canaryMinSubstring bytes.
func secretForms(s string) []string {
	forms := contentForms(s)
	b := []byte(s)
	forms = append(forms,
		base64.StdEncoding.EncodeToString(b), base64.RawStdEncoding.EncodeToString(b),
		base64.URLEncoding.EncodeToString(b), base64.RawURLEncoding.EncodeToString(b),
		url.QueryEscape(s), url.PathEscape(s))
	for i := 0; i+canaryMinSubstring <= len(s); i++ {
		forms = append(forms, s[i:i+canaryMinSubstring])
	}
	return forms
}

// contentForms returns the spellings of document or memory content: raw
// and JSON-escaped (substrings of ordinary text would match innocently).
func contentForms(s string) []string {
	j, _ := json.Marshal(s)
	return []string{s, strings.Trim(string(j), `"`)}
}

// CanarySet collects what must never be logged.
type CanarySet struct {
	mu    sync.Mutex
	forms map[string]string // spelling → name of the canary
}

func (c *CanarySet) add(name string, forms []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.forms == nil {
		c.forms = map[string]string{}
	}
	for _, f := range forms {
		if f != "" {
			c.forms[f] = name
		}
	}
}

func (c *CanarySet) Secret(name, s string) {
	if len(s) >= canaryMinSubstring {
		c.add(name, secretForms(s))
	}
}

func (c *CanarySet) Content(name, s string) {
	if len(s) >= 32 {
		c.add(name, contentForms(s))
	}
}

// Find returns the names of canaries found in hay, one per name.
func (c *CanarySet) Find(hay string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	seen := map[string]bool{}
	var found []string
	for f, name := range c.forms {
		if !seen[name] && strings.Contains(hay, f) {
			seen[name] = true
			found = append(found, name+" as "+quoteShort(f))
		}
	}
	return found
}

func quoteShort(s string) string {
	if len(s) > 24 {
		s = s[:24] + "…"
	}
	b, _ := json.Marshal(s)
	return string(b)
}
