//go:build bench

package bench

// The one-principal phase of TestBench: one agent with one token
// reading a 2.5 KB document as fast as the server answers, sequentially
// beside the bare GET, then 1, 8 and 32 calls at a time, against the fake
// GitHub with no added latency. The other phases spread their load over
// many principals, which hides what one busy agent meets: the pool and
// PostgreSQL under 32 requests at once.

import (
	"bytes"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"heyaira/store/storetest"
)

// benchSingleLoop is one closed loop of the phase, of reads or of the
// floor's reads (bench_floor_test.go).
type benchSingleLoop struct {
	workers           int
	reads, bare       benchStats
	readsPerSec       float64
	bareReadsPerSec   float64
	serverCPU, pgCPU  time.Duration // per read
	harnessCPU        time.Duration // per read: the driver, the fake GitHub and the proxy (this process)
	sessionsPer1000   float64       // new database connections the server opened, per 1000 reads
	statementsPerRead float64
	floor             *benchSingleLoop
}

func benchSingle(t *testing.T, e *benchEnv, cfg benchConfig) string {
	t.Helper()
	var d *benchDoc
	for _, x := range e.docs {
		if x.name == "2.5 KB" {
			d = x
		}
	}
	e.gh.SetLatency(0)
	defer e.gh.SetLatency(cfg.latency)
	pg := newBenchPGCPU(t)
	defer pg.db.Close()
	u := e.users[0]
	read := func() benchResult { return e.read(u, u.first[d], d) }
	bare := func() benchResult { r, _ := e.bare(d); return r }
	floor := func() benchResult { return e.floorRead(u, d) }

	// Sequential, interleaved, the order rotated every round: the read, the
	// bare GET from this process, the bare GET from a process of its own
	// (bench_bare_test.go), timed in that process, and the floor's read.
	proc := startBareProc(t, e, d)
	const warm, rounds = 50, 1000
	var seq []benchSample
	for i := range warm + rounds {
		for j := range 4 {
			var s benchSample
			switch start := time.Now(); (i + j) % 4 {
			case 0:
				s = benchSample{kind: "read", res: read(), lat: time.Since(start)}
			case 1:
				s = benchSample{kind: "bare", res: bare(), lat: time.Since(start)}
			case 2:
				s.kind = "bare-proc"
				s.res, s.lat = proc.get()
			case 3:
				s = benchSample{kind: "floor", res: floor(), lat: time.Since(start)}
			}
			if i >= warm {
				seq = append(seq, s)
			}
		}
	}
	seqRead, seqBare, seqProc := benchSummarize(seq, "read"), benchSummarize(seq, "bare"), benchSummarize(seq, "bare-proc")
	seqFloor := benchSummarize(seq, "floor")

	// measure is one closed loop of fire with the CPU and the database
	// traffic it caused.
	measure := func(c int, kind string, fire func() benchResult) *benchSingleLoop {
		l := &benchSingleLoop{workers: c}
		s0, h0 := e.cpu()
		pgc0, acc0 := pg.cpu(), e.pg.Counts()
		start := time.Now()
		samples := benchClosedLoop(c, cfg.singleFor, func(int) (string, benchResult) { return kind, fire() })
		wall := time.Since(start)
		s1, h1 := e.cpu()
		pgc1, acc1 := pg.cpu(), e.pg.Counts().Sub(acc0)
		l.reads = benchSummarize(samples, "")
		n := float64(l.reads.n - l.reads.errors)
		l.readsPerSec = n / wall.Seconds()
		l.serverCPU = time.Duration(float64(s1-s0) / n)
		l.pgCPU = time.Duration(float64(pgc1-pgc0) / n)
		l.harnessCPU = time.Duration(float64(h1-h0) / n)
		l.sessionsPer1000 = 1000 * float64(acc1.Accepted) / n
		l.statementsPerRead = float64(acc1.Statements) / n
		return l
	}
	var loops []*benchSingleLoop
	var statements string
	for _, c := range []int{1, 8, 32} {
		if c == 32 {
			if path := os.Getenv("HEYAIRA_BENCH_SINGLE_PROFILE"); path != "" {
				go e.cpuProfile(path, cfg.singleFor*2/3)
			}
			pg.resetStatements()
		}
		l := measure(c, "read", read)
		if c == 32 {
			statements = pg.statements()
		}
		start := time.Now()
		bs := benchClosedLoop(c, cfg.singleFor, func(int) (string, benchResult) { return "bare", bare() })
		l.bare = benchSummarize(bs, "")
		l.bareReadsPerSec = float64(l.bare.n-l.bare.errors) / time.Since(start).Seconds()
		l.floor = measure(c, "floor", floor)
		loops = append(loops, l)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n## One principal, small reads\n\n")
	fmt.Fprintf(&b, "The %s document (first fragment = whole file) read by one principal with one token, fake GitHub with no added latency. "+
		"Sequential: %d rounds of one read, one bare GET from the driver (the process that holds the fake) and one from a process of its own, in rotating order. Closed loops of %v per concurrency, then the bare GET at the same concurrency. "+
		"CPU is the server process, the whole PostgreSQL cluster (postmaster, backends, and the backends it reaped) and the harness (this process: driver, fake GitHub, counting proxy). Load average at the end: %s.\n\n",
		d.name, rounds, cfg.singleFor, benchLoadAvg())
	b.WriteString("| measure | value |\n|---|---|\n")
	fmt.Fprintf(&b, "| sequential p50: read / bare GET / ratio | %s / %s / %.2f× |\n", benchMs(seqRead.p50), benchMs(seqBare.p50),
		float64(seqRead.p50)/float64(seqBare.p50))
	fmt.Fprintf(&b, "| sequential p50: read / bare GET from another process / ratio | %s / %s / %.2f× |\n", benchMs(seqRead.p50),
		benchMs(seqProc.p50), float64(seqRead.p50)/float64(seqProc.p50))
	fmt.Fprintf(&b, "| sequential p99: read / bare GET / bare GET from another process | %s / %s / %s |\n", benchMs(seqRead.p99),
		benchMs(seqBare.p99), benchMs(seqProc.p99))
	fmt.Fprintf(&b, "| sequential p50: the floor of the rules / ratio to the bare GET from another process / read ÷ floor | %s / %.2f× / %.2f× |\n",
		benchMs(seqFloor.p50), float64(seqFloor.p50)/float64(seqProc.p50), float64(seqRead.p50)/float64(seqFloor.p50))
	fmt.Fprintf(&b, "| sequential errors: read / bare / bare from another process / floor | %s / %s / %s / %s |\n", seqRead.errorText(),
		seqBare.errorText(), seqProc.errorText(), seqFloor.errorText())
	b.WriteString("\n| concurrent | reads/s | bare GETs/s | p50 | p99 | bare p99 | p99 ÷ bare p99 | server CPU/read | PostgreSQL CPU/read | harness CPU/read | new DB sessions /1000 reads | statements/read | errors |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, l := range loops {
		fmt.Fprintf(&b, "| %d | %.0f | %.0f | %s | %s | %s | %.2f× | %s | %s | %s | %.1f | %.2f | %s |\n", l.workers, l.readsPerSec, l.bareReadsPerSec,
			benchMs(l.reads.p50), benchMs(l.reads.p99), benchMs(l.bare.p99), float64(l.reads.p99)/float64(l.bare.p99),
			benchMs(l.serverCPU), benchMs(l.pgCPU), benchMs(l.harnessCPU), l.sessionsPer1000, l.statementsPerRead, l.reads.errorText())
	}
	b.WriteString("\nThe floor of the rules (bench_floor_test.go), in the same process after each loop above: authorize, fetch, audit, answer GitHub's body; nothing else.\n\n")
	b.WriteString("| concurrent | floor reads/s | read ÷ floor reads/s | p50 | p99 | p99 ÷ bare p99 | server CPU/read | PostgreSQL CPU/read | harness CPU/read | server + PostgreSQL: read − floor | new DB sessions /1000 reads | statements/read | errors |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, l := range loops {
		f := l.floor
		fmt.Fprintf(&b, "| %d | %.0f | %.2f | %s | %s | %.2f× | %s | %s | %s | %s | %.1f | %.2f | %s |\n", l.workers, f.readsPerSec, l.readsPerSec/f.readsPerSec,
			benchMs(f.reads.p50), benchMs(f.reads.p99), float64(f.reads.p99)/float64(l.bare.p99), benchMs(f.serverCPU), benchMs(f.pgCPU),
			benchMs(f.harnessCPU), benchMs(l.serverCPU+l.pgCPU-f.serverCPU-f.pgCPU), f.sessionsPer1000, f.statementsPerRead, f.reads.errorText())
	}
	if statements != "" {
		b.WriteString("\nPostgreSQL's view of the 32-concurrent loop (pg_stat_statements, by total time):\n\n")
		b.WriteString(statements)
	}
	return b.String()
}

// benchPGCPU reads the CPU time of the whole PostgreSQL cluster from /proc:
// the postmaster with the children it has reaped, plus its live children.
type benchPGCPU struct {
	t          *testing.T
	db         *sql.DB
	postmaster int
	pgss       bool // pg_stat_statements is loaded
}

func newBenchPGCPU(t *testing.T) *benchPGCPU {
	t.Helper()
	db, err := sql.Open("postgres", storetest.BaseURL(t))
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	var backend int
	if err := db.QueryRow(`SELECT pg_backend_pid()`).Scan(&backend); err != nil {
		t.Fatal(err)
	}
	f := benchProcStat(backend)
	if f == nil {
		t.Fatalf("no /proc entry for PostgreSQL backend %d", backend)
	}
	pm, _ := strconv.Atoi(f[1])
	p := &benchPGCPU{t: t, db: db, postmaster: pm}
	// Only where the cluster preloads it (scripts/bench: HEYAIRA_BENCH_PGSS=1).
	_, err = db.Exec(`CREATE EXTENSION IF NOT EXISTS pg_stat_statements`)
	var one int
	p.pgss = err == nil && db.QueryRow(`SELECT count(*) FROM pg_stat_statements`).Scan(&one) == nil
	return p
}

// benchProcStat is the fields of /proc/pid/stat after the command name
// (f[0] is the state, f[1] the parent, f[11]… utime, stime, cutime, cstime).
func benchProcStat(pid int) []string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil
	}
	return strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
}

func (p *benchPGCPU) cpu() time.Duration {
	ticks := func(f []string, n int) int64 {
		var s int64
		for _, x := range f[11 : 11+n] {
			v, _ := strconv.ParseInt(x, 10, 64)
			s += v
		}
		return s
	}
	total := ticks(benchProcStat(p.postmaster), 4)
	ents, _ := filepath.Glob("/proc/[0-9]*/stat")
	want := strconv.Itoa(p.postmaster)
	for _, path := range ents {
		pid, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(path, "/proc/"), "/stat"))
		if f := benchProcStat(pid); f != nil && f[1] == want {
			total += ticks(f, 2)
		}
	}
	return time.Duration(total) * 10 * time.Millisecond
}

func (p *benchPGCPU) resetStatements() {
	if p.pgss {
		p.db.Exec(`SELECT pg_stat_statements_reset()`)
	}
}

// statements is a markdown table of the statements the server ran since
// resetStatements, most total time first.
func (p *benchPGCPU) statements() string {
	if !p.pgss {
		return ""
	}
	rows, err := p.db.Query(`
		SELECT calls, round(mean_exec_time::numeric * 1000, 1), round(total_exec_time::numeric, 1),
		       shared_blks_hit + shared_blks_read, wal_records, regexp_replace(left(query, 90), '\s+', ' ', 'g')
		FROM pg_stat_statements
		WHERE query NOT LIKE '%pg_stat_statements%' AND calls >= 100
		ORDER BY total_exec_time DESC LIMIT 6`)
	if err != nil {
		return fmt.Sprintf("(pg_stat_statements: %v)\n", err)
	}
	defer rows.Close()
	var b strings.Builder
	b.WriteString("| calls | mean µs | total ms | buffers | WAL records | statement |\n|---|---|---|---|---|---|\n")
	for rows.Next() {
		var calls, bufs, wal int64
		var mean, total float64
		var q string
		if rows.Scan(&calls, &mean, &total, &bufs, &wal, &q) == nil {
			fmt.Fprintf(&b, "| %d | %.1f | %.1f | %d | %d | `%s` |\n", calls, mean, total, bufs, wal, strings.ReplaceAll(q, "|", "\\|"))
		}
	}
	return b.String()
}
