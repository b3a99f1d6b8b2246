//go:build bench

package bench

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"heyaira/github/githubtest"
	"heyaira/oauth"
	"heyaira/store"
	"heyaira/store/storetest"
)

// benchEnv is one run of the load harness: a fresh database behind the
// counting proxy, the fake GitHub in this process, the server in a child
// process (bench_helper_test.go), a tenant with one principal (and one access
// token) per connection, and three documents.
type benchEnv struct {
	t       *testing.T
	gh      *githubtest.Server
	pg      *storetest.WireCounter
	cmd     *exec.Cmd
	exited  chan error
	base    string // the server: http://127.0.0.1:port
	dbURL   string // the server's database, straight (not through the proxy)
	debug   string // the helper's debug listener
	floor   string // the helper's floor of the read path (bench_floor_test.go)
	logPath string
	docs    []*benchDoc
	users   []*benchUser
	conns   int
	server  *http.Client // driver → server, at most conns connections
	github  *http.Client // driver → fake, for the bare GET
}

// benchDoc is one allowlisted document, with everything the driver needs to
// read it through the server and straight from the fake.
type benchDoc struct {
	name      string // "1 KiB"
	size      int
	repo      string // one repository per document: one token mint each
	content   []byte
	sha256    string // hex, as git_document_get reports it
	whole     string // source with fragment limit 65536: the first fragment
	half      string // source whose first fragment ends mid-document: its cursor continues
	halfLimit int
	bareURL   string // the contents URL on the fake
	bareSize  int    // the contents JSON's length
	ghToken   string // an installation token for the bare GET
}

// benchUser is one principal with its access token and, per document, a
// cursor for the continuation read and the request bodies.
type benchUser struct {
	token string
	first map[*benchDoc][]byte // git_document_get of doc.whole
	cont  map[*benchDoc][]byte // git_document_get of doc.half with a cursor
}

const benchCommit = "3333333333333333333333333333333333333333"

// newBenchEnv starts everything. users is the number of principals (and
// driver connections); latency is the fake GitHub's added delay.
func newBenchEnv(t *testing.T, users int, latency time.Duration, sizes map[string]int) *benchEnv {
	t.Helper()
	dbURL := storetest.NewMigratedURL(t)
	e := &benchEnv{t: t, gh: githubtest.New(t), pg: storetest.NewWireCounter(t, dbURL), conns: users, exited: make(chan error, 1), dbURL: dbURL}
	e.gh.SetLatency(latency)
	// The server is a process of its own, on the wall clock (githubtest.Clock.FollowWallClock).
	t.Cleanup(e.gh.Clock().FollowWallClock())

	// The tenant, written with the store's own methods, straight to the
	// database (not through the proxy, which counts only the server).
	ctx := t.Context()
	db, err := store.Open(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	account, err := db.CreateAccount(ctx, "Bench")
	if err != nil {
		t.Fatal(err)
	}
	project, err := db.CreateProject(ctx, account.ID, "Bench")
	if err != nil {
		t.Fatal(err)
	}
	// A bench run reads far more than a project's default hourly GitHub budget.
	unlimited := 1_000_000
	if _, err := db.SetProjectLimits(ctx, project.ID, store.LimitsUpdate{GitHubRequestsHourly: &unlimited}); err != nil {
		t.Fatal(err)
	}
	for name, size := range sizes {
		d := &benchDoc{name: name, size: size, repo: "docs-" + strconv.Itoa(size), content: benchMarkdown(size)}
		sum := sha256.Sum256(d.content)
		d.sha256 = hex.EncodeToString(sum[:])
		path := "docs/BENCH.md"
		e.gh.AddFileInGitHubOrder("bench", d.repo, benchCommit, path, d.content)
		if _, err := db.LinkRepository(ctx, store.NewRepository{ProjectID: project.ID, GitHubOwner: "bench",
			GitHubRepository: d.repo, GitHubInstallationID: e.gh.Binding("bench", d.repo).InstallationID}); err != nil {
			t.Fatal(err)
		}
		d.halfLimit = min(65536, size/2)
		// The same document twice, with two fragment limits: the second as a
		// reference, since a second runtime source of the same path and
		// commit would be a duplicate (admin refuses those).
		for _, s := range []struct {
			id    *string
			role  string
			limit int
		}{{&d.whole, "runtime", 65536}, {&d.half, "reference", d.halfLimit}} {
			src, err := db.AddDocumentSource(ctx, store.NewDocumentSource{ProjectID: project.ID, GitHubOwner: "bench",
				GitHubRepository: d.repo, Role: s.role, Path: path, CommitSHA: benchCommit, FragmentLimit: s.limit})
			if err != nil {
				t.Fatal(err)
			}
			*s.id = src.ID
		}
		d.bareURL = e.gh.URL() + "/repos/bench/" + d.repo + "/contents/" + path + "?ref=" + benchCommit
		e.docs = append(e.docs, d)
	}
	slices.SortFunc(e.docs, func(a, b *benchDoc) int { return a.size - b.size })

	// The server's listeners are made here, so the public URL (and so every
	// token's audience) is known before the child starts.
	ln, lnFile := benchListener(t)
	dbg, dbgFile := benchListener(t)
	fl, flFile := benchListener(t)
	e.base, e.debug, e.floor = "http://"+ln, "http://"+dbg, "http://"+fl+"/"
	principals := make([]string, users)
	for i := range principals {
		p, err := db.CreatePrincipal(ctx, account.ID, fmt.Sprintf("agent %d", i))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.AddMember(ctx, project.ID, p.ID); err != nil {
			t.Fatal(err)
		}
		u := &benchUser{token: benchSecrets(t).Mint(oauth.PrefixAccess, time.Now().Add(24*time.Hour)),
			first: map[*benchDoc][]byte{}, cont: map[*benchDoc][]byte{}}
		storetest.InsertAccessToken(t, dbURL, p.ID, project.ID, e.base+"/mcp", u.token, []string{"documents:read"})
		for _, d := range e.docs {
			u.first[d] = benchCallBody(d.whole, "")
		}
		e.users = append(e.users, u)
	}

	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	e.logPath = filepath.Join(dir, "server.log")
	logFile, err := os.Create(e.logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	e.cmd = exec.Command(os.Args[0], "-test.run=^TestServeHelperProcess$", "-test.timeout=0")
	e.cmd.Env = append(os.Environ(),
		benchHelperEnv+"=1",
		"HEYAIRA_BENCH_GITHUB_URL="+e.gh.URL(),
		"HEYAIRA_BENCH_GITHUB_CA_FILE="+write("github-ca.pem", e.gh.CertificatePEM()),
		"HEYAIRA_DATABASE_URL="+e.pg.DSN(dbURL),
		"HEYAIRA_PUBLIC_URL="+e.base,
		"HEYAIRA_METRICS_PUBLIC=1", // e.metrics scrapes the main listener
		"HEYAIRA_LISTEN_ADDR="+ln,  // unused: the listener is fd 3
		"HEYAIRA_CURSOR_KEY_FILE="+write("cursor.key", []byte(benchKey)),
		"HEYAIRA_GITHUB_APP_ID="+githubtest.AppID,
		"HEYAIRA_GITHUB_APP_PRIVATE_KEY_FILE="+write("app.pem", githubtest.KeyPEM()),
	)
	// HEYAIRA_BENCH_SERVER_GOGC is GOGC for the server alone, to weigh the
	// collector's target against memory without changing the driver's.
	if v := os.Getenv("HEYAIRA_BENCH_SERVER_GOGC"); v != "" {
		e.cmd.Env = append(e.cmd.Env, "GOGC="+v)
	}
	e.cmd.ExtraFiles = []*os.File{lnFile, dbgFile, flFile}
	e.cmd.Stdout, e.cmd.Stderr = logFile, logFile
	e.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // never outlive the harness
	if err := e.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lnFile.Close()
	dbgFile.Close()
	flFile.Close()
	go func() { e.exited <- e.cmd.Wait() }()
	t.Cleanup(e.stop)

	e.server = &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{
		MaxConnsPerHost: users, MaxIdleConnsPerHost: users, IdleConnTimeout: 90 * time.Second, DisableCompression: true}}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(e.gh.CertificatePEM())
	e.github = benchGitHubClient(roots, users)
	e.waitHealthy()

	// One read per document, one document at a time, mints one token per
	// repository in a known order; the driver borrows them for the bare GET.
	for i, d := range e.docs {
		if r := e.read(e.users[0], e.users[0].first[d], d); !r.ok {
			t.Fatalf("first read of %s: %s", d.name, r.code)
		}
		tokens := e.gh.IssuedTokens()
		if len(tokens) != i+1 {
			t.Fatalf("%d installation tokens after reading %d repositories", len(tokens), i+1)
		}
		d.ghToken = tokens[i]
		r, size := e.bare(d)
		if !r.ok {
			t.Fatalf("bare GET of %s: %s", d.name, r.code)
		}
		d.bareSize = size
	}
	e.refreshCursors()
	return e
}

// refreshCursors gives every user a fresh cursor per document (cursors live
// 15 minutes, and are bound to their principal).
func (e *benchEnv) refreshCursors() {
	for _, u := range e.users {
		for _, d := range e.docs {
			resp, raw := e.post(u.token, benchCallBody(d.half, ""))
			var m struct {
				Result struct {
					StructuredContent struct {
						NextCursor string `json:"next_cursor"`
					} `json:"structuredContent"`
				} `json:"result"`
			}
			if resp != http.StatusOK || json.Unmarshal(raw, &m) != nil || m.Result.StructuredContent.NextCursor == "" {
				e.t.Fatalf("cursor for %s: HTTP %d %.300s", d.name, resp, raw)
			}
			u.cont[d] = benchCallBody(d.half, m.Result.StructuredContent.NextCursor)
		}
	}
}

func benchCallBody(source, cursor string) []byte {
	args := map[string]any{"source_id": source}
	if cursor != "" {
		args["cursor"] = cursor
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
		"params": map[string]any{"name": "git_document_get", "arguments": args}})
	return b
}

// benchListener opens a loopback listener and returns its address and a
// file for the child; the parent's copy is closed.
func benchListener(t *testing.T) (string, *os.File) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f, err := ln.(*net.TCPListener).File()
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr, f
}

func (e *benchEnv) waitHealthy() {
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(e.base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case err := <-e.exited:
			e.t.Fatalf("server process exited early: %v\n%s", err, e.logTail())
		default:
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("server not healthy after 30 s: %v\n%s", err, e.logTail())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop ends the server with SIGTERM (a graceful shutdown) and waits.
func (e *benchEnv) stop() {
	if e.cmd.Process == nil {
		return
	}
	e.server.CloseIdleConnections()
	e.github.CloseIdleConnections()
	e.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-e.exited:
		if err != nil {
			e.t.Errorf("server process: %v\n%s", err, e.logTail())
		}
	case <-time.After(30 * time.Second):
		e.cmd.Process.Kill()
		e.t.Errorf("server process did not stop within 30 s of SIGTERM")
	}
	e.cmd.Process = nil
}

// logTail is the end of the server's output, or, when the process printed
// something other than JSON log lines (a panic, a test failure), that.
func (e *benchEnv) logTail() string {
	b, _ := os.ReadFile(e.logPath)
	for i := 0; i < len(b); {
		j := bytes.IndexByte(b[i:], '\n')
		if j < 0 {
			j = len(b) - i
		}
		if j > 0 && b[i] != '{' {
			return string(b[i:min(len(b), i+4000)])
		}
		i += j + 1
	}
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// post sends one MCP request and returns the status and body.
func (e *benchEnv) post(token string, body []byte) (int, []byte) {
	req, _ := http.NewRequest("POST", e.base+"/mcp", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := e.server.Do(req)
	if err != nil {
		return 0, []byte(err.Error())
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// serverPID is the child's process ID.
func (e *benchEnv) serverPID() int { return e.cmd.Process.Pid }

// metrics scrapes the server's /metrics into name{labels} → value.
func (e *benchEnv) metrics() map[string]float64 {
	resp, err := e.server.Get(e.base + "/metrics")
	if err != nil {
		e.t.Fatalf("/metrics: %v", err)
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
			out[line[:i]] = v
		}
	}
	return out
}

// heap reads the helper's /debug/heap (see bench_helper_test.go).
func (e *benchEnv) heap(gc bool) (live, alloc, gcs uint64) {
	u := e.debug + "/debug/heap"
	if gc {
		u += "?gc=1"
	}
	resp, err := http.Get(u)
	if err != nil {
		e.t.Fatalf("/debug/heap: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	fmt.Sscanf(string(b), "live=%d alloc=%d gcs=%d", &live, &alloc, &gcs)
	return live, alloc, gcs
}

// cpuProfile writes a CPU profile of the server over the next d to path
// (go tool pprof the test binary and the file).
func (e *benchEnv) cpuProfile(path string, d time.Duration) {
	resp, err := http.Get(fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", e.debug, max(1, int(d.Seconds()))))
	if err != nil {
		e.t.Logf("CPU profile: %v", err)
		return
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil {
		err = os.WriteFile(path, b, 0o644)
	}
	if err != nil {
		e.t.Logf("CPU profile: %v", err)
	}
}

// procStatus returns a field of /proc/<server>/status in kB (VmHWM, VmRSS).
func (e *benchEnv) procStatus(field string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", e.serverPID()))
	if err != nil {
		e.t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return -1
}

// fds counts the server's open file descriptors.
func (e *benchEnv) fds() int {
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", e.serverPID()))
	if err != nil {
		e.t.Fatal(err)
	}
	return len(ents)
}

// sockets counts the server's TCP connections to the fake GitHub and from
// clients to its own port, by matching the socket inodes of
// /proc/<pid>/fd against /proc/net/tcp: the pools are told apart from what
// a request would leak.
func (e *benchEnv) sockets() (github, clients int) {
	inodes := map[string]bool{}
	dir := fmt.Sprintf("/proc/%d/fd", e.serverPID())
	ents, _ := os.ReadDir(dir)
	for _, ent := range ents {
		if l, err := os.Readlink(filepath.Join(dir, ent.Name())); err == nil {
			if in, ok := strings.CutPrefix(l, "socket:["); ok {
				inodes[strings.TrimSuffix(in, "]")] = true
			}
		}
	}
	port := func(raw string) string { // as /proc/net/tcp writes it
		u, _ := url.Parse(raw)
		n, _ := strconv.Atoi(u.Port())
		return fmt.Sprintf("%04X", n)
	}
	ghPort, ownPort := port(e.gh.URL()), port(e.base)
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, _ := os.ReadFile(f)
		for _, line := range strings.Split(string(b), "\n")[1:] {
			fl := strings.Fields(line)
			if len(fl) < 10 || !inodes[fl[9]] || fl[3] == "0A" { // 0A: listening
				continue
			}
			switch {
			case strings.HasSuffix(fl[2], ":"+ghPort):
				github++
			case strings.HasSuffix(fl[1], ":"+ownPort):
				clients++
			}
		}
	}
	return github, clients
}

// cpu returns the CPU time used so far by the server and by this process
// (driver, fake GitHub and proxy).
func (e *benchEnv) cpu() (server, harness time.Duration) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", e.serverPID()))
	if err == nil {
		// Fields after the command name (which may hold spaces): state is
		// field 3, utime 14, stime 15, in clock ticks (100 per second on Linux).
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
		ut, _ := strconv.ParseInt(f[11], 10, 64)
		st, _ := strconv.ParseInt(f[12], 10, 64)
		server = time.Duration(ut+st) * 10 * time.Millisecond
	}
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	harness = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	return server, harness
}

// benchMarkdown is n bytes of Markdown-like text: mostly ASCII, with a few
// 2-, 3- and 4-byte characters, as documentation is. It ends on a character
// boundary (padded with spaces to exactly n bytes).
func benchMarkdown(n int) []byte {
	lines := []string{
		"## Continuity protocol, section notes\n",
		"The agent reads the runtime document first, then follows `next_cursor` until it is absent.\n",
		"- Keep état, Größe and naïve spellings intact; 中文 and 日本語 too; emoji such as 🚀 are data.\n",
		"Every fragment carries the SHA-256 of the whole file and of the fragment, so a client can check both.\n",
		"\n",
	}
	out := make([]byte, 0, n)
	for i := 0; ; i++ {
		l := lines[i%len(lines)]
		if len(out)+len(l) > n {
			break
		}
		out = append(out, l...)
	}
	for len(out) < n {
		out = append(out, ' ')
	}
	return out
}

// benchKey is the server's cursor key file; the harness mints its users'
// tokens under it, as the server would.
var benchKey = strings.Repeat("ab", 32) + "\n"

func benchSecrets(t testing.TB) *oauth.Secrets { return storetest.Secrets(t, benchKey) }
