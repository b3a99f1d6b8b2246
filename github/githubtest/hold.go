package githubtest

import (
	"context"
	"strings"
)

// Holding requests of one repository. A test of fairness between tenants
// needs one tenant's requests to stay in flight while another's are
// answered: Hold keeps every later request whose path is under
// /repos/<owner>/<repo>/ waiting (counted in Held) until the returned
// release is called, then answers it as usual. Other repositories are not
// affected.

type hold struct {
	prefix  string
	release chan struct{}
	waiting int
}

// Hold holds the requests for owner/repo until release is called (at the
// latest at cleanup, when every request context ends).
func (s *Server) Hold(owner, repo string) (release func()) {
	h := &hold{prefix: "/repos/" + owner + "/" + repo + "/", release: make(chan struct{})}
	s.mu.Lock()
	s.holds = append(s.holds, h)
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		for i, x := range s.holds {
			if x == h {
				s.holds = append(s.holds[:i], s.holds[i+1:]...)
				close(h.release)
				return
			}
		}
	}
}

// Held reports how many requests for owner/repo are being held now.
func (s *Server) Held(owner, repo string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, h := range s.holds {
		if h.prefix == "/repos/"+owner+"/"+repo+"/" {
			n += h.waiting
		}
	}
	return n
}

// waitHold blocks r while a hold covers its path. It reports false when the
// request ended first.
func (s *Server) waitHold(ctx context.Context, escaped string) bool {
	s.mu.Lock()
	var h *hold
	for _, x := range s.holds {
		if strings.HasPrefix(escaped, x.prefix) {
			h = x
			break
		}
	}
	if h == nil {
		s.mu.Unlock()
		return true
	}
	h.waiting++
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		h.waiting--
		s.mu.Unlock()
	}()
	select {
	case <-h.release:
		return true
	case <-ctx.Done():
		return false
	}
}
