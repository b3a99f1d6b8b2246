package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// The load driver: open loop, standard library only. Request i is due at
// t0 + i/rate and is started then, in its own goroutine, whatever the
// earlier ones are doing; its latency runs from when it was due, not from
// when it was sent. So a slow server cannot slow the driver down and hide
// its own latency (no coordinated omission): a request that waits for one
// of the driver's connections, or for a late timer, is charged the wait.

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

// benchOpenLoop fires rate requests per second for d: request i is of kind
// kindOf(i) and sent by fire(i). If more than maxOutstanding are still
// running when one is due, that one is not sent and counts as an
// "overload" error, so a saturated server cannot make the driver grow
// without bound.
func benchOpenLoop(rate float64, d time.Duration, maxOutstanding int64, kindOf func(i int) string, fire func(i int) benchResult) []benchSample {
	n := int(rate * d.Seconds())
	samples := make([]benchSample, n)
	var wg sync.WaitGroup
	var outstanding atomic.Int64
	t0 := time.Now().Add(10 * time.Millisecond)
	for i := range n {
		due := t0.Add(time.Duration(float64(i) / rate * float64(time.Second)))
		if w := time.Until(due); w > 0 {
			time.Sleep(w)
		}
		if outstanding.Load() >= maxOutstanding {
			samples[i] = benchSample{kind: kindOf(i), res: benchResult{code: "overload"}}
			continue
		}
		outstanding.Add(1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer outstanding.Add(-1)
			res := fire(i)
			samples[i] = benchSample{kind: kindOf(i), res: res, lat: time.Since(due)}
		}()
	}
	wg.Wait()
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
	req, _ := http.NewRequest("GET", d.bareURL, nil)
	req.Header.Set("Accept", "application/vnd.github.object+json")
	req.Header.Set("X-GitHub-Api-Version", "2022-11-28")
	req.Header.Set("User-Agent", "heyaira-bench")
	req.Header.Set("Authorization", "Bearer "+d.ghToken)
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
	slices.Sort(lats)
	st.p50, st.p90, st.p99 = benchPercentile(lats, 50), benchPercentile(lats, 90), benchPercentile(lats, 99)
	if len(lats) > 0 {
		st.max = lats[len(lats)-1]
	}
	return st
}

// benchPercentile is the nearest-rank percentile of sorted durations.
func benchPercentile(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := (len(sorted)*p + 99) / 100 // ceil(n·p/100), 1-based
	return sorted[max(i, 1)-1]
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
