package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"time"

	"heyaira/store"
)

// A document read used to cost three database statements: the bearer check,
// the source lookup and the audit row. The bearer check runs before the body
// is read, so it cannot know the source; but a git_document_get request is a
// few hundred bytes. authenticate therefore peeks at small /mcp bodies, and
// when one names a source of git_document_get it checks the token and reads
// that source in one statement (store.AuthenticateSource). The tool then
// takes the source from the request context instead of asking again.
//
// The peek is only a hint. It never decides anything: the body is put back
// untouched for handleMCP, which parses it strictly as before; the tool uses
// the prefetched row only if the source_id it parsed itself is the same; and
// the row is exactly what ProjectSource would return for the token's project
// (store tests pin that), read in the same snapshot as the token.

// maxPeek bounds the body read before authentication. A document read with a
// cursor is well under 1 KB; anything larger is not peeked at.
const maxPeek = 8 << 10

type prefetchKey struct{}

// prefetch is a source read together with the bearer token.
type prefetch struct {
	sourceID string
	src      store.DocumentSource
	found    bool
	err      error // the lookup failed although the token is valid
}

// authenticate checks the bearer token of r, and, when r is a small
// git_document_get call, reads the named source in the same statement. The
// returned request carries the prefetched source (if any) and a body that
// reads exactly as the original.
func authenticate(r *http.Request, st *store.DB, tokenHash []byte, now time.Time) (store.Auth, *http.Request, error) {
	sourceID := peekDocumentSource(r)
	if sourceID == "" {
		a, err := st.Authenticate(r.Context(), tokenHash, now)
		return a, r, err
	}
	a, src, found, err := st.AuthenticateSource(r.Context(), tokenHash, now, sourceID)
	pf := &prefetch{sourceID: sourceID, src: src, found: found}
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		// The statement also reads document_sources and repositories. A
		// fault confined to those (a lock held on them: security.md DB-06)
		// must stay what it was before the two lookups were folded: the
		// tool's store_unavailable, not a 503 of the bearer check. So the
		// token alone is checked, briefly; the tool then reports err.
		ctx, cancel := context.WithTimeout(r.Context(), fallbackAuthTimeout)
		defer cancel()
		var authErr error
		if a, authErr = st.Authenticate(ctx, tokenHash, now); authErr != nil {
			return a, r, authErr
		}
		pf, err = &prefetch{sourceID: sourceID, err: err}, nil
	}
	if err != nil {
		return a, r, err
	}
	return a, r.WithContext(context.WithValue(r.Context(), prefetchKey{}, pf)), nil
}

// fallbackAuthTimeout bounds the token check that follows a failed combined
// statement, so a database that is down or stuck costs at most this much more
// before the 503 than it did before.
const fallbackAuthTimeout = 500 * time.Millisecond

// peekDocumentSource returns the source_id of a git_document_get call in a
// body of at most maxPeek bytes, or "". It always leaves r.Body reading the
// same bytes (and the same error, if reading failed) as before.
func peekDocumentSource(r *http.Request) string {
	if r.ContentLength <= 0 || r.ContentLength > maxPeek || r.Body == nil {
		return ""
	}
	buf, err := io.ReadAll(io.LimitReader(r.Body, maxPeek+1))
	rest := io.Reader(r.Body)
	if err != nil {
		rest = errReader{err}
	}
	r.Body = peekedBody{Reader: io.MultiReader(bytes.NewReader(buf), rest), Closer: r.Body}
	if err != nil || len(buf) > maxPeek {
		return ""
	}
	var m struct {
		Method string `json:"method"`
		Params struct {
			Name      string `json:"name"`
			Arguments struct {
				SourceID string `json:"source_id"`
			} `json:"arguments"`
		} `json:"params"`
	}
	if json.Unmarshal(buf, &m) != nil || m.Method != "tools/call" || m.Params.Name != "git_document_get" ||
		!uuidRE.MatchString(m.Params.Arguments.SourceID) {
		return ""
	}
	return m.Params.Arguments.SourceID
}

type peekedBody struct {
	io.Reader
	io.Closer
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// prefetchedSource returns the source authenticate read for sourceID in
// project, ErrNotFound, or the error of that lookup; ok is false when there
// is no such prefetch and the tool must look the source up itself.
func prefetchedSource(ctx context.Context, projectID, sourceID string) (src store.DocumentSource, ok bool, err error) {
	pf, _ := ctx.Value(prefetchKey{}).(*prefetch)
	switch {
	case pf == nil || pf.sourceID != sourceID || (pf.found && pf.src.ProjectID != projectID):
		return store.DocumentSource{}, false, nil
	case pf.err != nil:
		return store.DocumentSource{}, true, pf.err
	case !pf.found:
		return store.DocumentSource{}, true, store.ErrNotFound
	}
	return pf.src, true, nil
}
