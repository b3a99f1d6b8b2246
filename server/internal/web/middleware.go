package web

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http"
	"time"
	"unicode/utf8"

	"heyaira/server/metrics"
)

type ctxKey int

const (
	reqIDKey ctxKey = iota
	logAttrsKey
	clientAddrKey
)

// WithRequestID gives every request a server-generated id. A client-supplied
// X-Request-Id is ignored, because a client could use it to forge log lines.
func WithRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b := make([]byte, 8)
		rand.Read(b)
		id := hex.EncodeToString(b)
		w.Header().Set("X-Request-Id", id)
		ctx := context.WithValue(r.Context(), reqIDKey, id)
		ctx = context.WithValue(ctx, logAttrsKey, &logAttrs{})
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(reqIDKey).(string)
	return id
}

// logAttrs collects what a handler learns (tool, project, principal, source,
// outcome code) for the single access-log line. Only identifiers and codes go
// here, never tokens, cursors or content.
type logAttrs []slog.Attr

// AddLog adds identifiers to the request's access-log line.
func AddLog(ctx context.Context, attrs ...slog.Attr) {
	if la, ok := ctx.Value(logAttrsKey).(*logAttrs); ok {
		*la = append(*la, attrs...)
	}
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// WithAccessLog writes one JSON line per request: id, method, route, status,
// duration and the identifiers the handler added. The URL's query is not
// logged, because the sign-in link carries its secret there. A handler that
// panics is logged and counted too, with the 500 that WithRecover (outside
// this) then answers.
func WithAccessLog(logger *slog.Logger, m *metrics.Metrics, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		returned := false
		defer func() {
			if !returned && sw.status == 0 {
				sw.status = http.StatusInternalServerError
			}
			logRequest(logger, m, r, sw.status, time.Since(start))
		}()
		next.ServeHTTP(sw, r)
		returned = true
	})
}

// logRequest writes the access-log line and the request's metrics.
func logRequest(logger *slog.Logger, m *metrics.Metrics, r *http.Request, status int, d time.Duration) {
	attrs := []slog.Attr{
		slog.String("req_id", RequestID(r.Context())),
		slog.String("method", r.Method),
		slog.String("route", r.Pattern),
		slog.String("path", r.URL.Path),
		slog.Int("status", status),
		slog.Duration("duration", d),
	}
	if la, ok := r.Context().Value(logAttrsKey).(*logAttrs); ok {
		attrs = append(attrs, *la...)
	}
	for i := range attrs {
		attrs[i] = truncateAttr(attrs[i])
	}
	logger.LogAttrs(r.Context(), slog.LevelInfo, "request", attrs...)
	route := r.Pattern
	if route == "" || route == "/" {
		route = "other" // unrouted paths are not labels: they are attacker-chosen
	}
	m.HTTPRequest(route, status, d)
}

// MaxLogValue bounds every string value of the access-log line. Some of
// them are chosen by the client (the path, the JSON-RPC method, a
// malformed source_id), so without a bound one request could write a
// megabyte of log. The JSON handler escapes control characters, so a
// value can never start a line of its own (docs/security-tests.md, LG-02).
const MaxLogValue = 256

// truncateAttr cuts a string value to MaxLogValue bytes, on a UTF-8
// boundary, and marks the cut.
func truncateAttr(a slog.Attr) slog.Attr {
	if a.Value.Kind() != slog.KindString || len(a.Value.String()) <= MaxLogValue {
		return a
	}
	return slog.String(a.Key, CutUTF8(a.Value.String(), MaxLogValue)+"…(truncated)")
}

// CutUTF8 cuts s, longer than n bytes, to at most n, at a character boundary.
func CutUTF8(s string, n int) string {
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// WithRecover turns a panic into a 500 and one log line. The panic value is
// logged by type only: it could hold request data.
func WithRecover(logger *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				logger.Error("panic", "req_id", RequestID(r.Context()), "route", r.Pattern, "type", typeName(v))
				http.Error(w, "internal error (request "+RequestID(r.Context())+")", http.StatusInternalServerError)
			}
		}()
		next.ServeHTTP(w, r)
	})
}

func typeName(v any) string {
	switch v.(type) {
	case error:
		return "error"
	case string:
		return "string"
	default:
		return "other"
	}
}

// WithSecurityHeaders sets headers every response should carry.
func WithSecurityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		next.ServeHTTP(w, r)
	})
}
