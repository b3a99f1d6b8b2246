//go:build bench

package bench

import (
	"bytes"
	"context"
	"fmt"
	"heyaira/internal/loadgen"
	"io"
	"net/http"
	"regexp"
	"slices"
	"sync"
	"time"
)

// benchResult is one request's outcome.
type benchResult struct {
	ok   bool
	code string // "ok", a tool error code, "http_<status>", "transport", "wrong_content" or "overload"
}

// benchSample is a result with its latency.
type benchSample struct {
	kind string
	res  benchResult
	lat  time.Duration
}

// benchOpenLoop runs openLoop at rate for d and returns a sample per
// request: request i is of kind kindOf(i), is sent by fire(i), and its
// latency runs from when it was due. A request openLoop did not start,
// because limit were still running, is an "overload" error.
func benchOpenLoop(rate float64, d time.Duration, limit int64, kindOf func(i int) string, fire func(i int) benchResult) []benchSample {
	samples := make([]benchSample, int(rate*d.Seconds()))
	skipped := loadgen.OpenLoop(context.Background(), rate, d, limit, func(i int, due time.Time) {
		res := fire(i)
		samples[i] = benchSample{kind: kindOf(i), res: res, lat: time.Since(due)}
	})
	for _, i := range skipped {
		samples[i] = benchSample{kind: kindOf(i), res: benchResult{code: "overload"}}
	}
	return samples
}

// benchClosedLoop runs workers that each send requests back to back for d.
func benchClosedLoop(workers int, d time.Duration, fire func(w int) (string, benchResult)) []benchSample {
	var mu sync.Mutex
	var samples []benchSample
	var wg sync.WaitGroup
	end := time.Now().Add(d)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(end) {
				start := time.Now()
				kind, res := fire(w)
				s := benchSample{kind: kind, res: res, lat: time.Since(start)}
				mu.Lock()
				samples = append(samples, s)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return samples
}

var benchErrorCode = regexp.MustCompile(`"code":"([a-z_]+)"`)

// read sends a git_document_get and checks the answer: HTTP 200, not a tool
// error, and the whole file's SHA-256 of d (the right document).
func (e *benchEnv) read(u *benchUser, body []byte, d *benchDoc) benchResult {
	status, b := e.post(u.token, body)
	switch {
	case status == 0:
		return benchResult{code: "transport"}
	case bytes.Contains(b, []byte(`"isError":true`)) || status != http.StatusOK:
		code := fmt.Sprintf("http_%d", status)
		if m := benchErrorCode.FindSubmatch(b); m != nil {
			code = string(m[1])
		}
		return benchResult{code: code}
	case !bytes.Contains(b, []byte(`"sha256":"`+d.sha256+`"`)):
		return benchResult{code: "wrong_content"}
	}
	return benchResult{ok: true, code: "ok"}
}

// bare is the floor: the same contents JSON, straight from the fake, over
// a connection like the server's, read to the end and not parsed.
func (e *benchEnv) bare(d *benchDoc) (benchResult, int) {
	req, err := benchContentsRequest(context.Background(), d.bareURL, d.ghToken)
	if err != nil {
		return benchResult{code: "transport"}, 0
	}
	resp, err := e.github.Do(req)
	if err != nil {
		return benchResult{code: "transport"}, 0
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK || (d.bareSize != 0 && int(n) != d.bareSize) {
		return benchResult{code: fmt.Sprintf("http_%d", resp.StatusCode)}, int(n)
	}
	return benchResult{ok: true, code: "ok"}, int(n)
}

// benchContentsRequest is a GET of GitHub's contents API as the product
// sends it, with an installation token: the bare GET's and the floor's.
func benchContentsRequest(ctx context.Context, url, token string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/vnd.github.object+json")
	req.Header.Set("X-GitHub-Api-Version", "2022-11-28")
	req.Header.Set("User-Agent", "heyaira-bench")
	req.Header.Set("Authorization", "Bearer "+token)
	return req, nil
}

// benchStats summarises the samples of one kind.
type benchStats struct {
	n, errors          int
	p50, p90, p99, max time.Duration
	codes              map[string]int // error codes and their counts
}

func benchSummarize(samples []benchSample, kind string) benchStats {
	st := benchStats{codes: map[string]int{}}
	var lats []time.Duration
	for _, s := range samples {
		if kind != "" && s.kind != kind {
			continue
		}
		st.n++
		if !s.res.ok {
			st.errors++
			st.codes[s.res.code]++
			continue
		}
		lats = append(lats, s.lat)
	}
	st.p50, st.p90, st.p99, st.max = loadgen.Pct(lats, .5), loadgen.Pct(lats, .9), loadgen.Pct(lats, .99), loadgen.Pct(lats, 1)
	return st
}

func (st benchStats) errorText() string {
	if st.errors == 0 {
		return "0"
	}
	keys := make([]string, 0, len(st.codes))
	for k := range st.codes {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b bytes.Buffer
	fmt.Fprintf(&b, "%d (", st.errors)
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s ×%d", k, st.codes[k])
	}
	b.WriteString(")")
	return b.String()
}
