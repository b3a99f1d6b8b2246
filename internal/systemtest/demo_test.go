package systemtest

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"heyaira/github/githubtest"
	"heyaira/internal/logbuf"
	"heyaira/store/storetest"
)

// TestDemoScriptsDev is a new user's first minutes: scripts/dev in a clean
// copy of the repository (the files git tracks, nothing built, no .data),
// with no GitHub App configured, then the official TypeScript SDK client
// (scripts/js/demo-flow.mjs) given only what scripts/dev printed: sign-in
// with the link, consent with document reading ticked, runtime_bootstrap_get
// for the allowlist, the runtime document, the three-fragment guide through
// next_cursor, and a workflow dispatch whose instruction layers were read
// from the stand-in's branch. Ctrl-C then stops the server and the cluster. Run again with an App configured, scripts/dev
// serves with the production binary and says nothing of the demo.
// Row BT-44 (docs/security-tests.md).
func TestDemoScriptsDev(t *testing.T) {
	t.Parallel()
	jsDir(t) // before the build: fail (or skip) early without the Node packages
	clone := cleanCopy(t)
	addr := freeAddr(t)
	msg, pid, stop, dev := startDev(t, clone, "HEYAIRA_LISTEN_ADDR="+addr)
	t.Logf("scripts/dev printed:\n%s", msg)
	for _, want := range []string{"DEMO MODE", "local stand-in for GitHub", "docs/github-app.md", "HEYAIRA_GITHUB_APP_ID",
		"use exactly this host"} {
		if !strings.Contains(msg, want) {
			t.Errorf("scripts/dev's message lacks %q", want)
		}
	}
	mcpURL := field(t, msg, `MCP URL:\s+(\S+)`)
	if mcpURL != "http://"+addr+"/mcp" {
		t.Errorf("MCP URL %q, want the public URL's http://%s/mcp", mcpURL, addr)
	}

	res := runNode(t, "demo-flow.mjs", map[string]any{"mcpURL": mcpURL,
		"signinURL": field(t, msg, `Sign-in link:\s+(\S+)`)},
		2*time.Minute)
	checks := []struct {
		what string
		got  any
		want any
	}{
		{"token scope has documents:read", strings.Contains(str(t, at(res, "oauth").(map[string]any), "tokenScope"), "documents:read"), true},
		{"runtime path", at(res, "runtime", "path"), githubtest.DemoRuntime},
		{"runtime commit", at(res, "runtime", "commitSHA"), githubtest.DemoCommit},
		{"runtime sha256", at(res, "runtime", "sha256Matches"), true},
		{"runtime title", at(res, "runtime", "title"), "# Demo runtime protocol"},
		{"runtime in one fragment", at(res, "runtime", "hasNext"), false},
		{"sources listed", len(at(res, "bootstrap").([]any)), 3},
		{"guide fragments", at(res, "guide", "fragments"), 3.0},
		{"guide bytes", at(res, "guide", "bytes"), float64(len(githubtest.DemoGuideText()))},
		{"guide contiguous", at(res, "guide", "contiguous"), true},
		{"guide fragment hashes", at(res, "guide", "fragmentsOK"), true},
		{"guide sha256", at(res, "guide", "sha256Matches"), true},
		{"guide is not ASCII", at(res, "guide", "nonASCII"), true},
		{"workflow stored", at(res, "workflow", "hasID"), true},
		{"workflow has the branch's engineer file", at(res, "workflow", "mentionsEngineerFile"), true},
		{"workflow has the account's core file", at(res, "workflow", "mentionsCoreFile"), true},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: got %v, want %v", c.what, c.got, c.want)
		}
	}
	tracked := 0
	for _, l := range at(res, "workflow", "layers").([]any) {
		if l.(map[string]any)["provenance"] == "tracking:"+githubtest.DemoBranch && l.(map[string]any)["commitSHA"] == githubtest.DemoCommit {
			tracked++
		}
	}
	if w, _ := at(res, "workflow", "warnings").([]any); w == nil || len(w) != 0 {
		t.Errorf("the suggested dispatch warned: %v (the demo provides every layer)", at(res, "workflow", "warnings"))
	}
	if tracked != 3 { // core and mode (account sources) and the engineer's role instructions
		t.Errorf("layers read from branch %s at %s: %d, want 3: %v", githubtest.DemoBranch, githubtest.DemoCommit, tracked, at(res, "workflow", "layers"))
	}

	// scripts/dev killed hard (SIGKILL: no cleanup) leaves its server and
	// cluster running; the next scripts/dev stops that server, reuses the
	// cluster, and comes up.
	syscall.Kill(dev, syscall.SIGKILL)
	msg, pid, stop, _ = startDev(t, clone, "HEYAIRA_LISTEN_ADDR="+addr)
	if !strings.Contains(msg, "Sign-in link:") {
		t.Errorf("scripts/dev after a SIGKILLed one:\n%s", msg)
	}

	// Ctrl-C: the server and the cluster stop, and scripts/dev exits. The
	// cluster runs in a session of its own (pg_ctl), so Ctrl-C reaches it
	// only through scripts/dev's cleanup.
	stop(0)
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Errorf("the server still listens on %s after Ctrl-C", addr)
	}
	if _, err := os.Stat(pid); !os.IsNotExist(err) {
		t.Errorf("the cluster still runs after Ctrl-C (postmaster.pid: %v)", err)
	}

	// With an App configured, the same command runs the production binary:
	// no demo, no stand-in.
	addr = freeAddr(t)
	msg, pid, stop, _ = startDev(t, clone, "HEYAIRA_LISTEN_ADDR="+addr, "HEYAIRA_GITHUB_APP_ID="+githubtest.AppID,
		"HEYAIRA_GITHUB_APP_PRIVATE_KEY_FILE="+writeFile(t, "app.pem", string(githubtest.KeyPEM()), 0o600))
	if strings.Contains(msg, "DEMO MODE") || strings.Contains(msg, "stand-in") {
		t.Errorf("scripts/dev with an App still speaks of the demo:\n%s", msg)
	}
	server := listenerPID(t, addr)
	cmdline, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(server), "cmdline"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.ReplaceAll(strings.TrimRight(string(cmdline), "\x00"), "\x00", " "),
		filepath.Join(clone, ".data", "bin", "heyaira")+" serve"; got != want {
		t.Errorf("with an App, scripts/dev serves with %q, want %q", got, want)
	}

	// Ctrl-C while the server dies instead of stopping: scripts/dev still
	// stops the cluster and exits 130. (Its cleanup once ran under set -e,
	// so a server's non-zero status ended it before the cluster was
	// stopped, and the next scripts/dev found the cluster running.)
	stop(server)
	if _, err := os.Stat(pid); !os.IsNotExist(err) {
		t.Errorf("the cluster still runs after Ctrl-C with a dying server (postmaster.pid: %v)", err)
	}
}

// startDev starts scripts/dev in clone with env added to a new user's
// environment (no HEYAIRA_ variables), waits until it has printed its
// message, and returns the message, the path of its cluster's
// postmaster.pid, a Ctrl-C that waits for the exit, and its process ID. Given a server's
// process ID, the Ctrl-C finds that server stopped (SIGSTOP) and kills it
// once scripts/dev has asked it to end: a server that dies rather than
// stops.
func startDev(t *testing.T, clone string, env ...string) (string, string, func(server int), int) {
	t.Helper()
	cmd := exec.Command(filepath.Join(clone, "scripts", "dev"))
	cmd.Dir = clone
	cmd.Env = append(withoutHeyAira(os.Environ()), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stderr logbuf.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // only if the test failed before Ctrl-C
	})
	printed, exited := make(chan string, 2), make(chan error, 1)
	go func() {
		var b strings.Builder
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			b.WriteString(sc.Text() + "\n")
			if strings.HasPrefix(sc.Text(), "Press Ctrl-C") {
				printed <- b.String()
				io.Copy(io.Discard, out)
				break
			}
		}
		printed <- b.String()
		exited <- cmd.Wait()
	}()
	var msg string
	select {
	case msg = <-printed:
	case <-time.After(8 * time.Minute): // a cold build on a busy machine
		t.Fatalf("scripts/dev printed nothing in 8 minutes; stderr:\n%s", stderr.String())
	}
	if !strings.Contains(msg, "Press Ctrl-C") {
		t.Fatalf("scripts/dev stopped before the server was ready:\n%s\nstderr:\n%s", msg, stderr.String())
	}
	pid := devClusterPID(t, clone, stderr.String())
	return msg, pid, func(server int) {
		t.Helper()
		if server != 0 {
			// Stopped before the Ctrl-C: a signal that reaches a server
			// still on its way to the stop is dequeued lowest number first,
			// so SIGINT and scripts/dev's SIGTERM could be handled ahead of
			// SIGSTOP and never be seen pending.
			syscall.Kill(server, syscall.SIGSTOP)
			waitProcState(t, server, "T")
		}
		syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
		if server != 0 {
			waitSignalPending(t, server, syscall.SIGTERM) // scripts/dev's cleanup sent it
			syscall.Kill(server, syscall.SIGKILL)
		}
		select {
		case err := <-exited:
			if ee, ok := err.(*exec.ExitError); err != nil && (!ok || ee.ExitCode() != 130) {
				t.Errorf("scripts/dev after Ctrl-C: %v, want exit 130", err)
			}
		case <-time.After(time.Minute):
			t.Fatal("scripts/dev did not stop within a minute of Ctrl-C")
		}
	}, cmd.Process.Pid
}

// devClusterPID is the postmaster.pid of scripts/dev's cluster: under
// .data/pg, or where scripts/dev said it lives when postgres cannot reach
// .data. It must exist. If a failure leaves that cluster running (it runs in
// a session of its own, which no signal to scripts/dev reaches), the test's
// cleanup shuts it down and waits for it.
func devClusterPID(t *testing.T, clone, stderr string) string {
	t.Helper()
	dir := filepath.Join(clone, ".data", "pg")
	if m := regexp.MustCompile(`the cluster lives in (\S+)`).FindStringSubmatch(stderr); m != nil {
		dir = m[1]
	}
	pid := filepath.Join(dir, "data", "postmaster.pid")
	if _, err := os.Stat(pid); err != nil {
		t.Fatalf("scripts/dev's cluster: %v", err)
	}
	t.Cleanup(func() {
		b, err := os.ReadFile(pid)
		if err != nil {
			return // stopped, as it should be
		}
		n, err := strconv.Atoi(strings.SplitN(string(b), "\n", 2)[0])
		if cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", n)); err != nil || !bytes.Contains(cmd, []byte(dir)) {
			return // not that cluster's postmaster
		}
		syscall.Kill(n, syscall.SIGQUIT) // immediate shutdown; the postmaster removes its pid file
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			if _, err := os.Stat(pid); os.IsNotExist(err) {
				return
			}
		}
		t.Errorf("scripts/dev's cluster (pid %d) still runs 30 s after SIGQUIT", n)
	})
	return pid
}

// waitSignalPending waits until sig is pending for the (stopped) process
// pid: /proc/pid/status's ShdPnd, a hex mask with bit sig-1 for sig.
func waitSignalPending(t *testing.T, pid int, sig syscall.Signal) {
	t.Helper()
	waitStatus(t, pid, fmt.Sprintf("%v pending", sig), func(field func(string) string) bool {
		m, err := strconv.ParseUint(field("ShdPnd"), 16, 64)
		return err == nil && m&(1<<(sig-1)) != 0
	})
}

// waitProcState waits until process pid is in state (the letter of
// /proc/pid/status's State, e.g. "T" for stopped).
func waitProcState(t *testing.T, pid int, state string) {
	t.Helper()
	waitStatus(t, pid, "state "+state, func(field func(string) string) bool {
		return strings.HasPrefix(field("State"), state+" ")
	})
}

// waitStatus polls /proc/pid/status, up to a minute, until ok holds of its
// fields (field gives one's value, trimmed); what names the wait.
func waitStatus(t *testing.T, pid int, what string, ok func(field func(string) string) bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			t.Fatalf("process %d: %v", pid, err)
		}
		field := func(name string) string {
			for _, line := range strings.Split(string(b), "\n") {
				if v, found := strings.CutPrefix(line, name+":"); found {
					return strings.TrimSpace(v)
				}
			}
			return ""
		}
		if ok(field) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d: no %s within a minute", pid, what)
		}
	}
}

// listenerPID finds the process that listens on addr (127.0.0.1:port),
// from /proc/net/tcp and the processes' open sockets.
func listenerPID(t *testing.T, addr string) int {
	t.Helper()
	_, port, _ := net.SplitHostPort(addr)
	p, _ := strconv.Atoi(port)
	tcp, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		t.Fatal(err)
	}
	var inode string
	for _, line := range strings.Split(string(tcp), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) > 9 && f[1] == fmt.Sprintf("0100007F:%04X", p) && f[3] == "0A" { // 0A: LISTEN
			inode = f[9]
		}
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/fd/*")
	for _, fd := range procs {
		if target, err := os.Readlink(fd); err == nil && target == "socket:["+inode+"]" {
			pid, _ := strconv.Atoi(strings.Split(fd, "/")[2])
			return pid
		}
	}
	t.Fatalf("no process listens on %s", addr)
	return 0
}

// cleanCopy copies the files git knows (tracked, and new ones not ignored)
// from the working tree into a fresh directory that the postgres system user
// can reach (scripts/dev runs the cluster as postgres when run as root).
func cleanCopy(t *testing.T) string {
	t.Helper()
	ls, err := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		storetest.Missing(t, "skipped: not a git checkout (git ls-files: %v)", err)
	}
	root := t.TempDir()
	clone := filepath.Join(root, "heyaira")
	for dir := clone; dir != os.TempDir() && dir != filepath.Dir(dir); dir = filepath.Dir(dir) {
		defer os.Chmod(dir, 0o755) // t.TempDir's folders are 0700
	}
	for _, name := range bytes.Split(bytes.TrimRight(ls, "\x00"), []byte{0}) {
		src := string(name)
		fi, err := os.Lstat(src)
		if err != nil || !fi.Mode().IsRegular() { // deleted in the working tree, or a symlink
			continue
		}
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(clone, src)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, data, fi.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
	return clone
}

// withoutHeyAira drops every HEYAIRA_ variable: a new user has none set.
func withoutHeyAira(env []string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "HEYAIRA_") {
			out = append(out, kv)
		}
	}
	return out
}

// field returns the first group of re in s, or fails.
func field(t *testing.T, s, re string) string {
	t.Helper()
	m := regexp.MustCompile(re).FindStringSubmatch(s)
	if m == nil {
		t.Fatalf("no %s in:\n%s", re, s)
	}
	return m[1]
}
