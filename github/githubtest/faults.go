package githubtest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"
)

// A Fault replaces the fake's answer to one request. The request is still
// counted and logged. The constructors below cover the faults of
// docs/design.md §10 and docs/security-tests.md §2.5 (PF-01 to PF-11); a
// test may write its own.
type Fault func(w http.ResponseWriter, r *http.Request)

type faultEntry struct {
	f      Fault
	before func(r *http.Request) // set instead of f: runs, then the normal answer
	left   int                   // requests left; < 0 means until ClearFaults
}

// Inject makes every later request on route get f, until ClearFaults.
func (s *Server) Inject(route Route, f Fault) { s.InjectN(route, -1, f) }

// InjectN makes the next n requests on route get f. Faults queue: a second
// InjectN on the same route applies after the first is used up.
func (s *Server) InjectN(route Route, n int, f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults[route] = append(s.faults[route], &faultEntry{f: f, left: n})
}

// BeforeN runs f at the next n requests on route, before the fake gives its
// normal answer: a test changes the world while a request is in flight. It
// queues with InjectN.
func (s *Server) BeforeN(route Route, n int, f func(r *http.Request)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults[route] = append(s.faults[route], &faultEntry{before: f, left: n})
}

// ClearFaults removes every injected fault.
func (s *Server) ClearFaults() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.faults)
}

// takeFault pops the fault for one request on route; s.mu must be held.
func (s *Server) takeFault(route Route) *faultEntry {
	q := s.faults[route]
	if len(q) == 0 {
		return nil
	}
	e := q[0]
	if e.left > 0 {
		e.left--
		if e.left == 0 {
			s.faults[route] = q[1:]
		}
	}
	return e
}

// Status answers code with body and the given header name/value pairs.
func Status(code int, body string, header ...string) Fault {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		writeJSON(w, code, []byte(body))
	}
}

// JSON answers code with v encoded as JSON.
func JSON(code int, v any) Fault {
	body, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("githubtest: JSON: %v", err))
	}
	return Status(code, string(body))
}

// Redirect answers code (301, 302, 307, 308) with Location: location and
// GitHub's "Moved Permanently" body.
func Redirect(code int, location string) Fault {
	return Status(code, `{"message":"Moved Permanently","url":"`+location+`","documentation_url":"https://docs.github.com/rest"}`,
		"Location", location)
}

// RateLimitPrimary answers 403 with x-ratelimit-remaining: 0 and
// x-ratelimit-reset: reset, as for an exhausted primary limit.
func RateLimitPrimary(reset time.Time) Fault {
	return Status(http.StatusForbidden,
		`{"message":"API rate limit exceeded for installation ID 1.","documentation_url":"https://docs.github.com/rest/using-the-rest-api/rate-limits-for-the-rest-api","status":"403"}`,
		"X-RateLimit-Remaining", "0", "X-RateLimit-Reset", strconv.FormatInt(reset.Unix(), 10))
}

// RateLimitSecondary answers 403 with GitHub's secondary-limit message and
// documentation URL, and Retry-After: retryAfter seconds when it is > 0.
func RateLimitSecondary(retryAfter int) Fault {
	body := `{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",` +
		`"documentation_url":"https://docs.github.com/rest/using-the-rest-api/rate-limits-for-the-rest-api#about-secondary-rate-limits","status":"403"}`
	if retryAfter > 0 {
		return Status(http.StatusForbidden, body, "Retry-After", strconv.Itoa(retryAfter))
	}
	return Status(http.StatusForbidden, body)
}

// TooManyRequests answers 429, with Retry-After: retryAfter seconds when it
// is > 0.
func TooManyRequests(retryAfter int) Fault {
	body := `{"message":"Too Many Requests","status":"429"}`
	if retryAfter > 0 {
		return Status(http.StatusTooManyRequests, body, "Retry-After", strconv.Itoa(retryAfter))
	}
	return Status(http.StatusTooManyRequests, body)
}

// Stall never answers: it holds the request until the client gives up or
// the fake is closed.
func Stall() Fault {
	return func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }
}

// StallAfterHeaders sends 200 headers with Content-Length: contentLength,
// then no body until the client gives up. A client that reads the body
// waits for its deadline; one that checks the length first returns at once.
func StallAfterHeaders(contentLength int64) Fault {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Header().Set("Content-Length", strconv.FormatInt(contentLength, 10))
		w.WriteHeader(http.StatusOK)
		http.NewResponseController(w).Flush()
		<-r.Context().Done()
	}
}

// Chunked answers 200 with body in chunked framing, without Content-Length.
func Chunked(body []byte) Fault {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		rc := http.NewResponseController(w)
		for len(body) > 0 {
			n := min(len(body), 32<<10)
			if _, err := w.Write(body[:n]); err != nil {
				return
			}
			rc.Flush()
			body = body[n:]
		}
	}
}

// LyingLength answers 200 with a false Content-Length: claimed, written on
// the raw connection. With chunked, the body follows in chunked framing
// (net/http then ignores the length, as RFC 9112 §6.3 requires); without,
// the whole body follows the headers as-is and the connection is closed.
func LyingLength(claimed int, body []byte, chunked bool) Fault {
	return func(w http.ResponseWriter, r *http.Request) {
		raw(w, func(bw *bufio.Writer) {
			fmt.Fprintf(bw, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n", claimed)
			if !chunked {
				bw.WriteString("Connection: close\r\n\r\n")
				bw.Write(body)
				return
			}
			bw.WriteString("Transfer-Encoding: chunked\r\n\r\n")
			for len(body) > 0 {
				n := min(len(body), 32<<10)
				fmt.Fprintf(bw, "%x\r\n", n)
				bw.Write(body[:n])
				bw.WriteString("\r\n")
				body = body[n:]
			}
			bw.WriteString("0\r\n\r\n")
		}, false)
	}
}

// Truncated sends 200 headers with Content-Length: contentLength, then only
// the first len(partial) bytes, then closes the connection normally.
func Truncated(contentLength int, partial []byte) Fault {
	return func(w http.ResponseWriter, r *http.Request) {
		raw(w, func(bw *bufio.Writer) {
			fmt.Fprintf(bw, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", contentLength)
			bw.Write(partial)
		}, false)
	}
}

// Reset drops the connection with a TCP RST before any answer.
func Reset() Fault {
	return func(w http.ResponseWriter, r *http.Request) { raw(w, nil, true) }
}

// ResetMidBody sends 200 headers with Content-Length: contentLength and the
// bytes of partial, then drops the connection with a TCP RST.
func ResetMidBody(contentLength int, partial []byte) Fault {
	return func(w http.ResponseWriter, r *http.Request) {
		raw(w, func(bw *bufio.Writer) {
			fmt.Fprintf(bw, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", contentLength)
			bw.Write(partial)
		}, true)
	}
}

// raw hijacks the connection, lets write produce bytes (may be nil), then
// closes it, with an RST when reset is set.
func raw(w http.ResponseWriter, write func(*bufio.Writer), reset bool) {
	conn, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic("githubtest: hijack: " + err.Error())
	}
	if write != nil {
		write(brw.Writer)
		brw.Flush()
	}
	if reset {
		if nc, ok := conn.(interface{ NetConn() net.Conn }); ok {
			if tcp, ok := nc.NetConn().(*net.TCPConn); ok {
				tcp.SetLinger(0) // close sends RST instead of FIN
				tcp.Close()
				return
			}
		}
	}
	conn.Close()
}
