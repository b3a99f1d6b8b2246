package systemtest

// Slow-header connections (docs/security-tests.md LD-03, T10): the real
// program's http.Server has a 5 s ReadHeaderTimeout and bounded headers;
// a thousand connections that drip one header byte a second must not slow
// normal traffic, and every descriptor they cost must come back.

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"heyaira/github/githubtest"
	"heyaira/internal/app"
	"heyaira/internal/loadgen"
	"heyaira/internal/soak"
	"heyaira/store/storetest"
)

// serverSideConns counts established TCP connections whose local port is
// port (the server's end of each connection), from /proc/net/tcp.
func serverSideConns(port int) int {
	b, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		return -1
	}
	want := fmt.Sprintf(":%04X", port)
	n := 0
	for _, line := range strings.Split(string(b), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) > 3 && strings.HasSuffix(f[1], want) && f[3] == "01" {
			n++
		}
	}
	return n
}

func portOf(t testing.TB, base string) int {
	u, _ := url.Parse(base)
	p, err := strconv.Atoi(u.Port())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestT10SlowHeaders is LD-03 / T10: 1,000 connections each send a partial
// request and then one header byte per second. Normal traffic (50 req/s)
// keeps p99 ≤ 2× its baseline; the server closes every slow connection at
// the 5 s read-header timeout; descriptors return to the baseline after
// it. scripts/soak runs 2,000 connections.
// Row LD-03 (docs/security-tests.md).
func TestT10SlowHeaders(t *testing.T) {
	// Not parallel: latency and descriptor figures are process-wide.
	slow := soak.Scaled(1000, 2000)
	dbURL := storetest.NewURL(t)
	gh := githubtest.New(t)
	s := newLiveServer(t, dbURL+"&application_name=heyaira", gh, app.Hooks{}, 100)
	admin := sqlDB(t, dbURL)
	port := portOf(t, s.base)
	c := newLoadClient(s.base)
	defer c.close()
	c.toolCall(s.access, "memory_put", map[string]any{"key": "n", "content": "x"})
	normal := func(d time.Duration) []outcome {
		rec := &recorder{}
		loadgen.OpenLoop(t.Context(), 50, d, 0, func(int, time.Time) {
			rec.add(c.toolCall(s.access, "memory_get", map[string]any{"key": "n"}))
		})
		return rec.all()
	}
	normal(time.Second) // warm up
	c.close()
	base := snapshot(admin, "heyaira")
	baseOuts := normal(3 * time.Second)
	baseP99 := loadgen.Pct(durations(baseOuts, outcome.ok), 0.99)

	// Open the slow connections: a request line, a header, then a drip.
	conns := make([]net.Conn, 0, slow)
	for range slow {
		cn, err := net.Dial("tcp", strings.TrimPrefix(s.base, "http://"))
		if err != nil {
			t.Fatalf("dial #%d: %v", len(conns), err)
		}
		fmt.Fprintf(cn, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
		conns = append(conns, cn)
	}
	opened := time.Now()
	peakServer := serverSideConns(port)
	peakFDs := openFDs()
	stopDrip := make(chan struct{})
	var dripWG sync.WaitGroup
	dripWG.Add(1)
	go func() {
		defer dripWG.Done()
		for {
			select {
			case <-stopDrip:
				return
			case <-time.After(time.Second):
			}
			for _, cn := range conns {
				cn.SetWriteDeadline(time.Now().Add(10 * time.Millisecond))
				cn.Write([]byte("a"))
			}
		}
	}()
	slowOuts := normal(4 * time.Second)
	slowP99 := loadgen.Pct(durations(slowOuts, outcome.ok), 0.99)
	for _, o := range slowOuts {
		if !o.ok() {
			t.Errorf("normal request during the slow connections: %s HTTP %d %.200s", o.code, o.status, o.body)
		}
	}

	// Every slow connection is closed by the server at the read-header
	// timeout (5 s after its first byte): a read sees EOF or a reset. The
	// drip goes on until just after that timeout, so that it is seen not
	// to extend it.
	time.Sleep(time.Until(opened.Add(6 * time.Second)))
	close(stopDrip)
	dripWG.Wait()
	// The reads wait for the close up to closeBy: long after the 5 s header
	// timeout (a loaded machine fires the server's timers late), short of
	// the 30 s ReadTimeout that would close them without one.
	closeBy := opened.Add(25 * time.Second)
	closedByServer, lastClose := 0, time.Duration(0)
	var wg sync.WaitGroup
	var mu sync.Mutex
	for _, cn := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cn.SetReadDeadline(closeBy)
			_, err := io.Copy(io.Discard, bufio.NewReader(cn))
			var ne net.Error
			if err == nil || !(errors.As(err, &ne) && ne.Timeout()) {
				mu.Lock()
				closedByServer++
				lastClose = max(lastClose, time.Since(opened))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	// The normal client's keep-alive connections are not slow ones: close
	// them first, then count what the server still holds.
	c.close()
	afterServer := 0
	loadgen.BackToBaseline(hygieneHang, 20*time.Millisecond, func() bool { afterServer = serverSideConns(port); return afterServer <= 5 })
	for _, cn := range conns {
		cn.Close()
	}
	h, took := waitHygiene(t, admin, "heyaira", base, 5*time.Second, 5)
	// A second baseline after the slow connections are gone: on a shared
	// machine the neighbours' load drifts, and the baseline is the
	// traffic before and after, pooled.
	afterOuts := normal(2 * time.Second)
	c.close()
	baseOuts = append(baseOuts, afterOuts...)
	baseP99 = loadgen.Pct(durations(baseOuts, outcome.ok), 0.99)

	ratio := float64(slowP99) / float64(baseP99)
	t.Logf("T10: %d slow-header connections; normal memory_get at 50/s: p99 %v (before and after) → %v during (×%.2f; %d and %d samples)",
		slow, baseP99.Round(100*time.Microsecond), slowP99.Round(100*time.Microsecond), ratio, len(baseOuts), len(slowOuts))
	t.Logf("T10: server-side connections %d at peak, %d after the read-header timeout; %d of %d closed by the server; "+
		"the last %v after they were opened; descriptors %d at baseline, %d at peak, %d after (%v to settle)",
		peakServer, afterServer, closedByServer, slow, lastClose.Round(time.Millisecond), base.fds, peakFDs, h.fds, took.Round(10*time.Millisecond))
	// The gate is 2× the baseline p99; under -race, with other packages'
	// tests on the same cores, it doubles again (raceOn).
	gate := 2.0
	if raceOn {
		gate = 4.0
	}
	soak.Gate(t, ratio <= gate || slowP99 <= baseP99+10*time.Millisecond,
		"normal p99 %v with slow connections, over %.0f× the baseline %v", slowP99, gate, baseP99)
	soak.Gate(t, lastClose <= 8*time.Second, "the last slow connection closed %v after they were opened, want ≤ 8 s", lastClose)
	if closedByServer != slow {
		t.Errorf("%d of %d slow connections still open after the read-header timeout", slow-closedByServer, slow)
	}
	if afterServer > 5 {
		t.Errorf("%d server-side connections remain after the read-header timeout", afterServer)
	}
}
