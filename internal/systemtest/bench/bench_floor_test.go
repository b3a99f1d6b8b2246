//go:build bench

package bench

// The floor of the read path's rules: what a read costs when it
// does only the I/O the rules require and nothing else. A read must be
// authorized against the database at that moment and audited before it is
// answered (three statements: the token, the source, and the audit row,
// committed before the answer), and fetch the file from GitHub (one
// request, no cache).
// The floor does exactly that, with the product's own store methods
// (Authenticate, ProjectSource, Audit) and GitHub transport, over the
// same counting proxy, in the server's process, but:
//
//   - no JSON-RPC parse: the body is read and ignored;
//   - no decode of the contents JSON, no UTF-8 check, no hashes;
//   - no fragment, cursor, log line, metric, limiter or in-flight wait;
//   - the answer is GitHub's body as received.
//
// So no read that keeps the rules with these statements and this
// transport (net/http, database/sql with lib/pq, PostgreSQL) can cost less
// in this harness, whose driver, fake GitHub and counting proxy share the
// cores with the server. The one-principal phase (bench_single_test.go)
// measures it beside the real read, in the same run: the gap between the
// two is what the product's own code costs.
//
// It is served on its own listener (fd 5 of the helper process) and only
// in the test binary.

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"heyaira/store"
)

// Headers by which the driver names what the floor reads: it does not parse
// the body, so the source and the installation token (which the product
// would take from its cache) come beside it.
const (
	benchFloorSource = "X-Bench-Floor-Source"
	benchFloorToken  = "X-Bench-Floor-Token"
)

// benchFloor is the floor handler: authorize, fetch, audit, answer. It
// makes the checks of the real read that need no parse: the token's
// audience (resource), the source's and the repository's revocation, and
// a body bound; like the product, it answers 503 when the store fails.
func benchFloor(st *store.DB, gh *http.Client, githubBase, resource string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.Copy(io.Discard, io.LimitReader(r.Body, 1<<20)); err != nil {
			http.Error(w, "body", http.StatusBadRequest)
			return
		}
		token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok {
			http.Error(w, "no bearer", http.StatusUnauthorized)
			return
		}
		hash := sha256.Sum256([]byte(token))
		a, err := st.Authenticate(r.Context(), hash[:], time.Now())
		switch {
		case errors.Is(err, store.ErrNotFound), err == nil && a.Kind == "oauth" && a.Resource != resource:
			http.Error(w, "token", http.StatusUnauthorized)
			return
		case err != nil:
			http.Error(w, "store", http.StatusServiceUnavailable)
			return
		}
		src, err := st.ProjectSource(r.Context(), a.ProjectID, r.Header.Get(benchFloorSource))
		switch {
		case err != nil:
			http.Error(w, "store", http.StatusServiceUnavailable)
			return
		case src.RevokedAt != nil || src.RepositoryRevokedAt != nil || src.CommitSHA == nil:
			http.Error(w, "source", http.StatusForbidden)
			return
		}
		segs := strings.Split(src.Path, "/") // escaped as github/contents.go does
		for i := range segs {
			segs[i] = url.PathEscape(segs[i])
		}
		u := githubBase + "/repos/" + url.PathEscape(src.GitHubOwner) + "/" + url.PathEscape(src.GitHubRepository) +
			"/contents/" + strings.Join(segs, "/") + "?ref=" + url.QueryEscape(*src.CommitSHA)
		req, err := benchContentsRequest(r.Context(), u, r.Header.Get(benchFloorToken))
		if err != nil {
			http.Error(w, "url", http.StatusInternalServerError)
			return
		}
		outcome, body := "ok", []byte(nil)
		resp, err := gh.Do(req)
		if err == nil {
			const limit = 8 << 20
			body, err = io.ReadAll(io.LimitReader(resp.Body, limit+1))
			resp.Body.Close()
			if err == nil && (resp.StatusCode != http.StatusOK || len(body) > limit) {
				err = errors.New("github")
			}
		}
		if err != nil {
			outcome = "provider_unavailable"
		}
		// The read's one row, committed before the answer, whatever GitHub said.
		if err := st.Audit(r.Context(), store.AuditEvent{Actor: store.ActorPrincipal(a.PrincipalID), Action: "document.read",
			ProjectID: a.ProjectID, Target: src.ID, Outcome: outcome,
			Details: map[string]any{"path": src.Path, "commit_sha": *src.CommitSHA}}); err != nil {
			http.Error(w, "audit", http.StatusServiceUnavailable)
			return
		}
		if outcome != "ok" {
			http.Error(w, "github", http.StatusBadGateway)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	})
}

// floorRead is one read through the floor: HTTP 200 and GitHub's contents
// JSON of d, whole.
func (e *benchEnv) floorRead(u *benchUser, d *benchDoc) benchResult {
	req, _ := http.NewRequest("POST", e.floor, bytes.NewReader(u.first[d]))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+u.token)
	req.Header.Set(benchFloorSource, d.whole)
	req.Header.Set(benchFloorToken, d.ghToken)
	resp, err := e.server.Do(req)
	if err != nil {
		return benchResult{code: "transport"}
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	switch {
	case err != nil:
		return benchResult{code: "transport"}
	case resp.StatusCode != http.StatusOK:
		return benchResult{code: fmt.Sprintf("http_%d", resp.StatusCode)}
	case int(n) != d.bareSize:
		return benchResult{code: "wrong_content"}
	}
	return benchResult{ok: true, code: "ok"}
}
