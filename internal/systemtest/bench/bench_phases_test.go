//go:build bench

package bench

// The phases of TestBench (bench_test.go), each returning its part of
// the report.

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"heyaira/github/githubtest"
	"heyaira/internal/loadgen"
	"heyaira/store"
)

// benchRow is one line of the latency table.
type benchRow struct {
	doc                *benchDoc
	first, cont, floor benchStats
}

// benchLatencyTable measures, per document, first fragments, continuations
// and the bare GET interleaved in one open-loop run, so noise hits all three
// alike.
func benchLatencyTable(e *benchEnv, cfg benchConfig) []benchRow {
	var rows []benchRow
	for _, d := range e.docs {
		rate := 90.0
		if d.size > 64<<10 {
			rate = 45
		}
		kinds := []string{"first", "continuation", "bare"}
		mix := benchMix(len(kinds), int(rate*cfg.tableFor.Seconds()))
		kindOf := func(i int) string { return kinds[mix[i]] }
		if d.size > 64<<10 && cfg.cpuProfile != "" {
			go e.cpuProfile(cfg.cpuProfile, cfg.tableFor*2/3)
		}
		samples := benchOpenLoop(rate, cfg.tableFor, 4*int64(cfg.conns), kindOf, func(i int) benchResult {
			u := e.users[(i/3)%len(e.users)]
			switch mix[i] {
			case 0:
				return e.read(u, u.first[d], d)
			case 1:
				return e.read(u, u.cont[d], d)
			}
			r, _ := e.bare(d)
			return r
		})
		rows = append(rows, benchRow{doc: d, first: benchSummarize(samples, "first"),
			cont: benchSummarize(samples, "continuation"), floor: benchSummarize(samples, "bare")})
	}
	return rows
}

// benchMix returns n request kinds in 0…k-1: each block of k requests holds
// every kind once, in a random order (fixed seed). With kinds in a fixed
// rotation, one kind would always arrive just as another's GitHub answer
// is being decoded, and the comparison would measure the schedule.
func benchMix(k, n int) []int {
	r := rand.New(rand.NewPCG(7, 7))
	mix := make([]int, n+k)
	for b := 0; b < len(mix); b += k {
		for j, v := range r.Perm(k) {
			if b+j < len(mix) {
				mix[b+j] = v
			}
		}
	}
	return mix
}

// benchSat is the saturation result for one document.
type benchSat struct {
	rate     float64 // highest offered rate that passed
	achieved float64 // completed per second at that rate
	p99      time.Duration
	failed   string // why the next step failed
	cpu      string
}

// benchSaturation steps the rate of first-fragment reads up until a step
// has errors, completes under 95% of the offered rate, or has a p99 more
// than 100 ms above the floor's p50 (T3 in docs/sizing.md).
func benchSaturation(e *benchEnv, cfg benchConfig, table []benchRow) map[*benchDoc]benchSat {
	out := map[*benchDoc]benchSat{}
	for _, row := range table {
		d := row.doc
		steps := []float64{100, 200, 300, 400, 600, 800, 1000, 1300, 1600, 2000}
		if d.size > 64<<10 {
			steps = []float64{25, 50, 75, 100, 125, 150, 200, 250, 300, 400}
		}
		var res benchSat
		for _, rate := range steps {
			s0, h0 := e.cpu()
			start := time.Now()
			samples := benchOpenLoop(rate, cfg.stepFor, 16*int64(cfg.conns), func(int) string { return "first" }, func(i int) benchResult {
				u := e.users[i%len(e.users)]
				return e.read(u, u.first[d], d)
			})
			wall := time.Since(start)
			s1, h1 := e.cpu()
			st := benchSummarize(samples, "")
			achieved := float64(st.n-st.errors) / wall.Seconds()
			overhead := st.p99 - row.floor.p50
			switch {
			case st.errors > 0:
				res.failed = fmt.Sprintf("%.0f/s: errors %s", rate, st.errorText())
			case achieved < 0.95*rate:
				res.failed = fmt.Sprintf("%.0f/s: completed %.0f/s", rate, achieved)
			case overhead > 100*time.Millisecond:
				res.failed = fmt.Sprintf("%.0f/s: p99 %s", rate, benchMs(st.p99))
			default:
				res.rate, res.achieved, res.p99 = rate, achieved, st.p99
				res.cpu = fmt.Sprintf("server %.0f%%, harness %.0f%%", 100*(s1-s0).Seconds()/wall.Seconds(),
					100*(h1-h0).Seconds()/wall.Seconds())
				time.Sleep(time.Second)
				continue
			}
			break
		}
		out[d] = res
		time.Sleep(2 * time.Second) // let a saturated step drain
	}
	return out
}

func benchTableMarkdown(e *benchEnv, table []benchRow, sat map[*benchDoc]benchSat, cfg benchConfig) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## Latency of `git_document_get` beside the floor (bare GET of the same contents JSON)\n\n")
	fmt.Fprintf(&b, "Per document, %v open loop at 90 requests/s (1 MiB: 45/s), first fragments, continuations and bare GETs in turn.\n", cfg.tableFor)
	b.WriteString("Overhead = server minus floor at the same percentile.\n\n")
	b.WriteString("| document | request | n | p50 | p90 | p99 | p50 ÷ floor | p99 ÷ floor | overhead p50 | overhead p99 | errors |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, row := range table {
		d := row.doc
		firstLen := min(d.size, 65536)
		for _, x := range []struct {
			name  string
			st    benchStats
			floor bool
		}{
			{fmt.Sprintf("first fragment (%s)", benchBytes(firstLen)), row.first, false},
			{fmt.Sprintf("continuation (%s)", benchBytes(min(d.size-d.halfLimit, d.halfLimit))), row.cont, false},
			{fmt.Sprintf("bare GET, %s JSON (floor)", benchBytes(d.bareSize)), row.floor, true},
		} {
			ratio50, ratio99, over50, over99 := "", "", "", ""
			if !x.floor {
				ratio50 = fmt.Sprintf("%.2f×", float64(x.st.p50)/float64(row.floor.p50))
				ratio99 = fmt.Sprintf("%.2f×", float64(x.st.p99)/float64(row.floor.p99))
				over50, over99 = benchMs(x.st.p50-row.floor.p50), benchMs(x.st.p99-row.floor.p99)
			}
			fmt.Fprintf(&b, "| %s | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s |\n", d.name, x.name, x.st.n,
				benchMs(x.st.p50), benchMs(x.st.p90), benchMs(x.st.p99), ratio50, ratio99, over50, over99, x.st.errorText())
		}
	}
	b.WriteString("\n## Throughput at saturation (first fragments)\n\n")
	fmt.Fprintf(&b, "Open-loop steps of %v; a step fails on any error, on completing under 95%% of the offered rate, or on a p99 more than 100 ms above the floor's p50.\n\n", cfg.stepFor)
	b.WriteString("| document | highest passing rate | completed/s | p99 there | CPU there | next step |\n|---|---|---|---|---|---|\n")
	for _, row := range table {
		s := sat[row.doc]
		fmt.Fprintf(&b, "| %s | %.0f/s | %.0f | %s | %s | %s |\n", row.doc.name, s.rate, s.achieved, benchMs(s.p99), s.cpu, s.failed)
	}
	return b.String()
}

// benchHygiene is what must come back to baseline after a load.
type benchHygiene struct {
	goroutines, fds, dbOpen, dbInUse int
	github, clients                  int // TCP connections to the fake GitHub, from clients
}

func (e *benchEnv) hygiene() benchHygiene {
	m := e.metrics()
	h := benchHygiene{goroutines: int(m["go_goroutines"]), fds: e.fds(), dbOpen: int(e.pg.Counts().Open),
		dbInUse: int(m["heyaira_db_connections_in_use"])}
	h.github, h.clients = e.sockets()
	return h
}

// scoped is what is left once the connection pools are taken out: an idle
// GitHub connection holds a descriptor and two goroutines (its read and
// write loops), a client connection a descriptor and its serving goroutine,
// a database connection a descriptor. A request that leaked would show here.
func (h benchHygiene) scoped() (goroutines, fds int) {
	return h.goroutines - 2*h.github - h.clients, h.fds - h.github - h.clients - h.dbOpen
}

// within reports whether h is back at base: nothing request-scoped more than
// tol above, and no database connection still in use.
func (h benchHygiene) within(base benchHygiene, tol int) bool {
	g, f := h.scoped()
	bg, bf := base.scoped()
	return g <= bg+tol && f <= bf+tol && h.dbInUse <= base.dbInUse
}

// benchSoak is T1/LD-01: the mix at cfg.soakRate for cfg.soakFor, then the
// hygiene check of T11.
func benchSoak(t *testing.T, e *benchEnv, cfg benchConfig) string {
	t.Helper()
	var d1, d16 *benchDoc
	for _, d := range e.docs {
		switch d.size {
		case 1 << 10:
			d1 = d
		case 16 << 10:
			d16 = d
		}
	}
	kinds := []string{"16 KiB first", "16 KiB continuation", "1 KiB first"}
	mix := benchMix(len(kinds), int(cfg.soakRate*max(cfg.soakFor, 5*time.Second).Seconds()))
	kindOf := func(i int) string { return kinds[mix[i]] }
	fire := func(i int) benchResult {
		u := e.users[(i/3)%len(e.users)]
		switch mix[i] {
		case 0:
			return e.read(u, u.first[d16], d16)
		case 1:
			return e.read(u, u.cont[d16], d16)
		}
		return e.read(u, u.first[d1], d1)
	}
	// Warm up at the same rate, so the server's pools (GitHub and database
	// connections) are the size this load needs before the baseline.
	benchOpenLoop(cfg.soakRate, 5*time.Second, 16*int64(cfg.conns), kindOf, fire)
	e.server.CloseIdleConnections()
	time.Sleep(2 * time.Second)
	base := e.hygiene()
	e.pg.ResetMaxOpen()

	var peak benchHygiene
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(500 * time.Millisecond):
			}
			h := e.hygiene()
			peak = benchHygiene{max(peak.goroutines, h.goroutines), max(peak.fds, h.fds),
				max(peak.dbOpen, int(e.pg.Counts().MaxOpen)), max(peak.dbInUse, h.dbInUse),
				max(peak.github, h.github), max(peak.clients, h.clients)}
		}
	}()
	s0, h0 := e.cpu()
	gh0 := e.gh.Count(githubtest.RouteContents)
	start := time.Now()
	samples := benchOpenLoop(cfg.soakRate, cfg.soakFor, 16*int64(cfg.conns), kindOf, fire)
	wall := time.Since(start)
	s1, h1 := e.cpu()
	close(stop)
	wg.Wait()
	ghReqs := e.gh.Count(githubtest.RouteContents) - gh0

	// Back to baseline: the driver closes its connections, as departing
	// clients do; the server must release everything else by itself.
	e.server.CloseIdleConnections()
	var at5 benchHygiene
	backIn, rawBack := time.Duration(-1), time.Duration(-1)
	end := time.Now()
	// Follow the counts for 5 s (back never reports true), noting when each
	// view was first back, and keep the reading taken at 5 s.
	loadgen.BackToBaseline(5*time.Second, 250*time.Millisecond, func() bool {
		h := e.hygiene()
		if h.within(base, 5) && backIn < 0 {
			backIn = time.Since(end)
		}
		if h.rawWithin(base, 5) && rawBack < 0 {
			rawBack = time.Since(end)
		}
		at5 = h
		return false
	})
	// Then the raw counts, pools included: they come back when the pools'
	// idle timeouts have closed what the load left (database/sql 1 minute,
	// checked once a minute; the GitHub transport 90 s).
	if rawBack < 0 && cfg.poolWait > 0 {
		if _, ok := loadgen.BackToBaseline(cfg.poolWait-time.Since(end), time.Second, func() bool {
			return e.hygiene().rawWithin(base, 5)
		}); ok {
			rawBack = time.Since(end)
		}
	}
	all := benchSummarize(samples, "")
	var b strings.Builder
	fmt.Fprintf(&b, "\n## Open loop %.0f requests/s for %v (T1, LD-01)\n\n", cfg.soakRate, cfg.soakFor)
	fmt.Fprintf(&b, "%d connections, %d principals, fake latency %v; 16 KiB first fragments and continuations (8 KiB each) and 1 KiB reads in turn. ",
		cfg.conns, len(e.users), cfg.latency)
	fmt.Fprintf(&b, "CPU: server %.0f%%, harness (driver, fake GitHub, proxy) %.0f%% of one core; %d GitHub contents requests for %d reads.\n\n",
		100*(s1-s0).Seconds()/wall.Seconds(), 100*(h1-h0).Seconds()/wall.Seconds(), ghReqs, all.n)
	b.WriteString("| request | n | p50 | p90 | p99 | max | errors |\n|---|---|---|---|---|---|---|\n")
	for _, k := range append(kinds, "") {
		st := benchSummarize(samples, k)
		name := k
		if k == "" {
			name = "all"
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s | %s |\n", name, st.n, benchMs(st.p50), benchMs(st.p90), benchMs(st.p99), benchMs(st.max), st.errorText())
	}
	back := "not within 5 s"
	if backIn >= 0 {
		back = fmt.Sprintf("after %.2f s", backIn.Seconds())
	}
	bg, bf := base.scoped()
	ag, af := at5.scoped()
	fmt.Fprintf(&b, "\n| server resource | baseline | peak | 5 s after |\n|---|---|---|---|\n")
	fmt.Fprintf(&b, "| goroutines | %d | %d | %d |\n", base.goroutines, peak.goroutines, at5.goroutines)
	fmt.Fprintf(&b, "| open file descriptors | %d | %d | %d |\n", base.fds, peak.fds, at5.fds)
	fmt.Fprintf(&b, "| database connections open (pool) | %d | %d | %d |\n", base.dbOpen, peak.dbOpen, at5.dbOpen)
	fmt.Fprintf(&b, "| database connections in use | %d | %d | %d |\n", base.dbInUse, peak.dbInUse, at5.dbInUse)
	fmt.Fprintf(&b, "| connections to GitHub (pool) | %d | %d | %d |\n", base.github, peak.github, at5.github)
	fmt.Fprintf(&b, "| client connections | %d | %d | %d |\n", base.clients, peak.clients, at5.clients)
	fmt.Fprintf(&b, "| goroutines, pools taken out | %d | | %d |\n", bg, ag)
	fmt.Fprintf(&b, "| file descriptors, pools taken out | %d | | %d |\n", bf, af)
	fmt.Fprintf(&b, "\nBack to baseline (pools taken out: ±5; database connections in use: none) %s. "+
		"The pools keep idle connections by design: database/sql up to %d for 1 minute, the GitHub transport up to 64 for 90 s.\n", back, store.DefaultMaxConns)
	const raw = "The raw counts (goroutines, descriptors, database connections open, pools included)"
	switch {
	case rawBack >= 0 && rawBack <= 5*time.Second:
		fmt.Fprintf(&b, "%s were back within ±5 of the baseline after %.2f s.\n", raw, rawBack.Seconds())
	case rawBack >= 0:
		fmt.Fprintf(&b, "%s were back within ±5 of the baseline after %.0f s, once the pools' idle timeouts had closed what the load left.\n", raw, rawBack.Seconds())
	case cfg.poolWait <= 0:
		fmt.Fprintf(&b, "%s were not back within ±5 of the baseline in 5 s, and were not followed further (HEYAIRA_BENCH_POOL_WAIT=0).\n", raw)
	default:
		fmt.Fprintf(&b, "%s were not back within ±5 of the baseline after %v.\n", raw, max(cfg.poolWait, 10*time.Second))
	}
	return b.String()
}

// rawWithin reports whether the raw counts, pools included, are back at
// base within tol.
func (h benchHygiene) rawWithin(base benchHygiene, tol int) bool {
	return h.goroutines <= base.goroutines+tol && h.fds <= base.fds+tol && h.dbOpen <= base.dbOpen+tol &&
		h.dbInUse <= base.dbInUse
}

// benchMemory is T4/LD-02: 64 concurrent 1 MiB reads (first fragments),
// closed loop, with the fake answering at once, so every read in flight is
// holding its buffers rather than waiting on GitHub: the worst case.
func benchMemory(t *testing.T, e *benchEnv, cfg benchConfig) string {
	t.Helper()
	var d *benchDoc
	for _, x := range e.docs {
		if x.size == 1<<20 {
			d = x
		}
	}
	const workers = 64
	e.gh.SetLatency(0)
	defer e.gh.SetLatency(cfg.latency)
	live0, _, gc0 := e.heap(true)
	var mu sync.Mutex
	var lives []uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		last := gc0
		for {
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
			live, _, gcs := e.heap(false)
			if gcs != last { // a new GC finished: a new reading of the live heap
				last = gcs
				mu.Lock()
				lives = append(lives, live)
				mu.Unlock()
			}
		}
	}()
	samples := benchClosedLoop(workers, cfg.memFor, func(w int) (string, benchResult) {
		u := e.users[w%len(e.users)]
		return "1 MiB", e.read(u, u.first[d], d)
	})
	close(stop)
	wg.Wait()
	liveAfter, _, _ := e.heap(true)
	liveAfter2, _, _ := e.heap(true) // nothing is pooled: the same as after the first
	hwm := e.procStatus("VmHWM")
	// What is left then is mostly the GitHub connections the burst opened,
	// with their TLS and bufio buffers, until they have been idle 90 s.
	liveIdle := uint64(0)
	if idle := 95 * time.Second; cfg.poolWait >= idle {
		time.Sleep(idle)
		e.heap(true)
		liveIdle, _, _ = e.heap(true)
	}
	st := benchSummarize(samples, "")
	var maxLive, sum uint64
	for _, l := range lives {
		maxLive = max(maxLive, l)
		sum += l
	}
	mean := uint64(0)
	if len(lives) > 0 {
		mean = sum / uint64(len(lives))
	}
	per := func(l uint64) string {
		if l < live0 {
			return "0"
		}
		return benchBytes(int((l - live0) / workers))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n## %d concurrent 1 MiB reads (T4, LD-02)\n\n", workers)
	fmt.Fprintf(&b, "Closed loop for %v, fake latency 0 (every read in flight holds its buffers); %d reads, p50 %s, p99 %s, errors %s. ",
		cfg.memFor, st.n, benchMs(st.p50), benchMs(st.p99), st.errorText())
	fmt.Fprintf(&b, "Live heap is what each GC found reachable (runtime/metrics /gc/heap/live:bytes, %d GCs sampled).\n\n", len(lives))
	b.WriteString("| measure | value |\n|---|---|\n")
	fmt.Fprintf(&b, "| peak RSS of the server process (VmHWM, whole run) | %s |\n", benchBytes(int(hwm*1024)))
	fmt.Fprintf(&b, "| live heap before (after a forced GC) | %s |\n", benchBytes(int(live0)))
	fmt.Fprintf(&b, "| live heap during, max / mean | %s / %s |\n", benchBytes(int(maxLive)), benchBytes(int(mean)))
	fmt.Fprintf(&b, "| live heap per in-flight read, max / mean: (during − before) ÷ %d | %s / %s |\n", workers, per(maxLive), per(mean))
	fmt.Fprintf(&b, "| live heap after (forced GC) | %s |\n", benchBytes(int(liveAfter)))
	fmt.Fprintf(&b, "| live heap after a second forced GC (no decode buffer outlives its read: the same) | %s |\n", benchBytes(int(liveAfter2)))
	if liveIdle > 0 {
		fmt.Fprintf(&b, "| live heap 95 s later, when the GitHub transport has closed the connections the burst opened (two forced GCs) | %s |\n", benchBytes(int(liveIdle)))
	}
	return b.String()
}
