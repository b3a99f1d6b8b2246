//go:build bench

package bench

// The benchmark harness (the performance targets T1–T5 and T9 of
// docs/sizing.md): the real server in a child process
// (bench_helper_test.go) against the fake GitHub over loopback, driven open
// loop (loadgen.OpenLoop, loadgen_test.go), its database traffic counted on the wire
// (storetest.WireCounter). The harness is behind the build tag bench, so a
// plain `go test` neither builds nor runs it. TestBench is the full run that
// scripts/bench starts and docs/sizing.md reports; it takes minutes and
// is skipped unless HEYAIRA_BENCH=1. TestBenchHarnessSmoke runs a few seconds
// of it in every scripts/test run (go test -tags bench), so the harness
// cannot rot and the counts it pins (one GitHub request per fragment, one
// mint per repository, one database statement per read) are checked on
// every run.

import (
	"database/sql"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"heyaira/github/githubtest"
	"heyaira/store/storetest"
)

// benchConfig is read from the environment scripts/bench sets.
type benchConfig struct {
	latency  time.Duration // fake GitHub latency (HEYAIRA_BENCH_LATENCY, 20ms)
	conns    int           // driver connections = principals (HEYAIRA_BENCH_CONNS, 64)
	soakRate float64       // HEYAIRA_BENCH_RATE, 200 per second
	soakFor  time.Duration // HEYAIRA_BENCH_DURATION, 60s
	tableFor time.Duration // per document size (HEYAIRA_BENCH_TABLE_DURATION, 30s)
	stepFor  time.Duration // per saturation step (HEYAIRA_BENCH_STEP, 5s)
	memFor   time.Duration // the 64-concurrent 1 MiB phase (HEYAIRA_BENCH_MEMORY_DURATION, 10s)
	// singleFor is each closed loop of the one-principal phase (HEYAIRA_BENCH_SINGLE_DURATION, 5s).
	singleFor time.Duration
	// poolWait is how long the soak follows the raw counts, pools included,
	// until they are back (HEYAIRA_BENCH_POOL_WAIT, 150s; 0 to skip).
	poolWait time.Duration
	report   string // where to write the markdown report (HEYAIRA_BENCH_REPORT)
	// cpuProfile, if set, is where a CPU profile of the server during the
	// 1 MiB latency run is written (HEYAIRA_BENCH_CPU_PROFILE).
	cpuProfile string
	// sizes are the documents measured (HEYAIRA_BENCH_SIZES, e.g. "1 MiB";
	// all of benchSizes when unset).
	sizes map[string]int
	// phases are the phases run (HEYAIRA_BENCH_PHASES, a comma list of
	// latency, single, soak, memory, saturation; all when unset). The per-call
	// counts always run: they are cheap and warm every pool.
	phases map[string]bool
}

// benchPhases are the phases of a full run, in the order they run.
var benchPhases = []string{"latency", "single", "soak", "memory", "saturation"}

func loadBenchConfig(t *testing.T) benchConfig {
	t.Helper()
	dur := func(k string, def time.Duration) time.Duration {
		if v := os.Getenv(k); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil {
				t.Fatalf("%s: %v", k, err)
			}
			return d
		}
		return def
	}
	num := func(k string, def float64) float64 {
		if v := os.Getenv(k); v != "" {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %v", k, err)
			}
			return f
		}
		return def
	}
	return benchConfig{
		latency:    dur("HEYAIRA_BENCH_LATENCY", 20*time.Millisecond),
		conns:      int(num("HEYAIRA_BENCH_CONNS", 64)),
		soakRate:   num("HEYAIRA_BENCH_RATE", 200),
		soakFor:    dur("HEYAIRA_BENCH_DURATION", 60*time.Second),
		tableFor:   dur("HEYAIRA_BENCH_TABLE_DURATION", 30*time.Second),
		stepFor:    dur("HEYAIRA_BENCH_STEP", 5*time.Second),
		memFor:     dur("HEYAIRA_BENCH_MEMORY_DURATION", 10*time.Second),
		singleFor:  dur("HEYAIRA_BENCH_SINGLE_DURATION", 5*time.Second),
		poolWait:   dur("HEYAIRA_BENCH_POOL_WAIT", 150*time.Second),
		report:     os.Getenv("HEYAIRA_BENCH_REPORT"),
		cpuProfile: os.Getenv("HEYAIRA_BENCH_CPU_PROFILE"),
		sizes:      benchPick(t, "HEYAIRA_BENCH_SIZES", benchSizes),
		phases:     benchPickPhases(t),
	}
}

// benchPick is the subset of all named by the comma list in env k, or all.
func benchPick(t *testing.T, k string, all map[string]int) map[string]int {
	t.Helper()
	v := os.Getenv(k)
	if v == "" {
		return all
	}
	picked := map[string]int{}
	for _, name := range strings.Split(v, ",") {
		name = strings.TrimSpace(name)
		n, ok := all[name]
		if !ok {
			t.Fatalf("%s: unknown %q", k, name)
		}
		picked[name] = n
	}
	return picked
}

func benchPickPhases(t *testing.T) map[string]bool {
	t.Helper()
	all := map[string]int{}
	for i, p := range benchPhases {
		all[p] = i
	}
	picked := map[string]bool{}
	for p := range benchPick(t, "HEYAIRA_BENCH_PHASES", all) {
		picked[p] = true
	}
	return picked
}

// benchSizes are the documents of the table.
var benchSizes = map[string]int{"1 KiB": 1 << 10, "2.5 KB": 2500, "16 KiB": 16 << 10, "1 MiB": 1 << 20}

// Row LD-02 (docs/security-tests.md).
func TestBench(t *testing.T) {
	if os.Getenv("HEYAIRA_BENCH") != "1" {
		t.Skip("load harness, not a test: scripts/bench runs it (HEYAIRA_BENCH=1); it takes minutes and writes the table of docs/sizing.md")
	}
	cfg := loadBenchConfig(t)
	for phase, needs := range map[string][]string{"soak": {"1 KiB", "16 KiB"}, "memory": {"1 MiB"}, "single": {"2.5 KB"}} {
		for _, size := range needs {
			if _, ok := cfg.sizes[size]; cfg.phases[phase] && !ok {
				t.Fatalf("phase %s reads the %s document: add it to HEYAIRA_BENCH_SIZES", phase, size)
			}
		}
	}
	load0 := benchLoadAvg()
	e := newBenchEnv(t, cfg.conns, cfg.latency, cfg.sizes)
	var r strings.Builder
	fmt.Fprintf(&r, "# scripts/bench, %s\n\n%s\n", time.Now().UTC().Format("2006-01-02 15:04 UTC"), benchMachine(t))
	fmt.Fprintf(&r, "Fake GitHub latency %v; %d driver connections, one principal each; open loop.\n\n", cfg.latency, cfg.conns)

	// The saturation steps come last: they leave the server's connection
	// pools at their largest, which would blur the soak's baseline.
	counts := benchCounters(t, e, 60)
	var table []benchRow
	var soak, memory, single string
	sat := map[*benchDoc]benchSat{}
	if cfg.phases["latency"] {
		table = benchLatencyTable(e, cfg)
	}
	if cfg.phases["single"] {
		single = benchSingle(t, e, cfg)
	}
	if cfg.phases["soak"] {
		soak = benchSoak(t, e, cfg)
	}
	if cfg.phases["memory"] {
		memory = benchMemory(t, e, cfg)
	}
	if cfg.phases["saturation"] {
		sat = benchSaturation(e, cfg, table)
	}
	r.WriteString(benchTableMarkdown(e, table, sat, cfg))
	r.WriteString(single)
	r.WriteString(soak)
	r.WriteString(memory)
	r.WriteString(counts.markdown(e))

	fmt.Fprintf(&r, "\nPeak RSS of the server process over the whole run (VmHWM): %s.\n", benchBytes(int(e.procStatus("VmHWM")*1024)))
	fmt.Fprintf(&r, "\nLoad average (1, 5, 15 min) at the start: %s; at the end: %s.\n", load0, benchLoadAvg())
	out := r.String()
	t.Log("\n" + out)
	if cfg.report != "" {
		if err := os.WriteFile(cfg.report, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestBenchHarnessSmoke is a few seconds of the harness in every scripts/test run:
// the child process, the proxy and the driver work, and the read path makes
// exactly one GitHub request per fragment, one token mint per repository,
// three database statements per tool call (the token, the source, and the
// audit row committed before the answer), and no errors under a short load.
// Row AS-03 (docs/security-tests.md).
func TestBenchHarnessSmoke(t *testing.T) {
	t.Parallel()
	e := newBenchEnv(t, 4, 2*time.Millisecond, map[string]int{"1 KiB": 1 << 10, "100 KiB": 100 << 10})
	c := benchCounters(t, e, 10)
	t.Logf("%d reads: %.2f statements, %.2f wire round trips, %d preparations, %.3f GitHub requests per call",
		c.calls, c.statementsPerCall, c.roundTripsPerCall, c.parses, c.requestsPerFragment)
	if c.statementsPerCall != 3 {
		t.Errorf("%.2f database statements per git_document_get, want 3 (the token, the source, the audit row)", c.statementsPerCall)
	}
	// A connection new to the pool prepares its statements once (more round
	// trips); otherwise a read is three round trips.
	if c.roundTripsPerCall > 3+12/float64(c.calls) {
		t.Errorf("%.2f database round trips per git_document_get, want 3", c.roundTripsPerCall)
	}
	if c.requestsPerFragment != 1 {
		t.Errorf("%.3f GitHub contents requests per fragment, want exactly 1", c.requestsPerFragment)
	}
	samples := benchOpenLoop(40, time.Second, 64, func(i int) string { return "read" }, func(i int) benchResult {
		u, d := e.users[i%len(e.users)], e.docs[i%len(e.docs)]
		if i%2 == 0 {
			return e.read(u, u.first[d], d)
		}
		return e.read(u, u.cont[d], d)
	})
	if st := benchSummarize(samples, ""); st.errors != 0 || st.n != 40 {
		t.Errorf("open loop: %d requests, errors %s", st.n, st.errorText())
	}
	if n := e.gh.Count(githubtest.RouteMint); n != len(e.docs) {
		t.Errorf("%d token mints for %d (installation, repository) pairs", n, len(e.docs))
	}
	// The bare GET from a process of its own (bench_bare_test.go) answers,
	// with the time it measured.
	p := startBareProc(t, e, e.docs[0])
	for range 3 {
		if r, lat := p.get(); !r.ok || lat <= 0 {
			t.Errorf("bare GET from another process: %s in %v", r.code, lat)
		}
	}
	// The floor of the rules (bench_floor_test.go) keeps them: three
	// statements and one GitHub request per read, GitHub's body returned.
	pg0, gh0 := e.pg.Counts(), e.gh.Count(githubtest.RouteContents)
	for _, d := range e.docs {
		if r := e.floorRead(e.users[0], d); !r.ok {
			t.Errorf("floor read of %s: %s", d.name, r.code)
		}
	}
	if n := e.pg.Counts().Sub(pg0).Statements; n != 3*int64(len(e.docs)) {
		t.Errorf("%d statements for %d floor reads, want 3 each", n, len(e.docs))
	}
	if n := e.gh.Count(githubtest.RouteContents) - gh0; n != len(e.docs) {
		t.Errorf("%d GitHub contents requests for %d floor reads", n, len(e.docs))
	}
}

// benchCounts are the per-call counts of the read path, measured on
// sequential reads (so nothing else runs).
type benchCounts struct {
	calls                  int
	statementsPerCall      float64
	roundTripsPerCall      float64
	requestsPerFragment    float64
	statementsFirst        float64
	statementsContinuation float64
	parses                 int64 // statements prepared meanwhile (new pool connections)
}

// benchCounters reads every document n times as a first fragment and n
// times as a continuation, spread over the users, and counts database
// statements and round trips (on the wire) and GitHub contents requests.
func benchCounters(t *testing.T, e *benchEnv, n int) benchCounts {
	t.Helper()
	var c benchCounts
	for _, kind := range []string{"first", "continuation"} {
		pg0, gh0, calls := e.pg.Counts(), e.gh.Count(githubtest.RouteContents), 0
		for i := range n {
			for _, d := range e.docs {
				u := e.users[i%len(e.users)]
				body := u.first[d]
				if kind == "continuation" {
					body = u.cont[d]
				}
				if r := e.read(u, body, d); !r.ok {
					t.Fatalf("%s read of %s: %s", kind, d.name, r.code)
				}
				calls++
			}
		}
		pg := e.pg.Counts().Sub(pg0)
		gh := e.gh.Count(githubtest.RouteContents) - gh0
		c.calls += calls
		c.statementsPerCall += float64(pg.Statements) / float64(2*calls)
		c.roundTripsPerCall += float64(pg.RoundTrips) / float64(2*calls)
		c.requestsPerFragment += float64(gh) / float64(2*calls)
		c.parses += pg.Parses
		if kind == "first" {
			c.statementsFirst = float64(pg.Statements) / float64(calls)
		} else {
			c.statementsContinuation = float64(pg.Statements) / float64(calls)
		}
	}
	return c
}

func (c benchCounts) markdown(e *benchEnv) string {
	var b strings.Builder
	b.WriteString("\n## Per call\n\n| measure | value |\n|---|---|\n")
	fmt.Fprintf(&b, "| GitHub contents requests per fragment (%d sequential reads) | %.3f |\n", c.calls, c.requestsPerFragment)
	fmt.Fprintf(&b, "| installation-token mints in the whole run, for %d (installation, repository) pairs | %d |\n",
		len(e.docs), e.gh.Count(githubtest.RouteMint))
	fmt.Fprintf(&b, "| database statements per `git_document_get` (first fragment / continuation) | %.2f / %.2f |\n",
		c.statementsFirst, c.statementsContinuation)
	fmt.Fprintf(&b, "| database wire round trips per `git_document_get` (Sync + Query messages; %d statements prepared meanwhile) | %.2f |\n",
		c.parses, c.roundTripsPerCall)
	return b.String()
}

func benchMachine(t *testing.T) string {
	model := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "model name"); ok {
				model = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
				break
			}
		}
	}
	pg := "PostgreSQL ?"
	if db, err := sql.Open("postgres", storetest.BaseURL(t)); err == nil {
		db.QueryRow(`SHOW server_version`).Scan(&pg)
		pg = "PostgreSQL " + pg
		db.Close()
	}
	return fmt.Sprintf("Machine: %s, %d cores (shared), %s, %s, %s/%s. Driver, fake GitHub, proxy, PostgreSQL and server share the cores; no pinning.\n",
		model, runtime.NumCPU(), runtime.Version(), pg, runtime.GOOS, runtime.GOARCH)
}

// benchLoadAvg is the machine's load average: other users of a shared
// machine show up here, and in every figure of the run.
func benchLoadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], ", ")
}

func benchMs(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 2, 64) + " ms"
}

func benchBytes(n int) string {
	switch {
	case n >= 1<<20:
		return strconv.FormatFloat(float64(n)/(1<<20), 'f', 2, 64) + " MiB"
	case n >= 1<<10:
		return strconv.FormatFloat(float64(n)/(1<<10), 'f', 1, 64) + " KiB"
	}
	return strconv.Itoa(n) + " B"
}
