package server

import (
	"context"
	"net/http"
	"sync/atomic"
	"time"

	"heyaira/server/internal/web"
	"heyaira/store"
)

// handleHealthz reports that the process is alive. It touches nothing else.
func handleHealthz() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		web.WriteJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
}

// handleReadyz reports whether the database answers within a second, and
// fails at once when the replica is draining. A GitHub problem (see
// Config.GitHubProblem) makes it answer 200 "degraded" with the reason.
func handleReadyz(st *store.DB, draining *atomic.Bool, githubProblem func() string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if draining.Load() {
			web.WriteJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "draining"})
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), time.Second)
		defer cancel()
		if err := st.Ping(ctx); err != nil {
			w.Header().Set("Retry-After", "5")
			web.WriteJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable"})
			return
		}
		if githubProblem != nil {
			if p := githubProblem(); p != "" {
				web.WriteJSON(w, http.StatusOK, map[string]string{"status": "degraded", "github": p})
				return
			}
		}
		web.WriteJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
}
