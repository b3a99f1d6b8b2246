package storetest

import (
	"context"
	"database/sql"
	"fmt"
	"heyaira/internal/skips"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// A private cluster for a plain `go test`. When EnvURL is unset, the first
// test of a binary that needs PostgreSQL starts a throwaway cluster the way
// scripts/pg.sh does: initdb into a temporary directory, listening only on a
// unix socket there, owned by the postgres system user when the tests run as
// root (PostgreSQL refuses to run as root). MainWithLeakCheck stops it and
// removes the directory after the tests; should the test binary die first,
// the server gets SIGINT (fast shutdown) as its parent-death signal.

// NoSkipEnv names the variable that turns every skip for a missing
// prerequisite (PostgreSQL, Node packages, Chromium) into a failure.
// scripts/test sets it, so CI never skips silently.
const NoSkipEnv = "HEYAIRA_TEST_NO_SKIP"

// Missing ends a test whose prerequisite is absent: it skips with the one
// line given, or fails with it when NoSkipEnv is set.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv(NoSkipEnv) != "" {
		t.Fatalf("%s (%s is set: no skips)", msg, NoSkipEnv)
	}
	skips.Record(t.Name(), msg) // printed at the end of the binary (leaktest.Main)
	t.Skip(msg)
}

var cluster struct {
	once sync.Once
	url  string
	dir  string
	cmd  *exec.Cmd
	done chan struct{}
	err  error // the one line Missing reports, or why the start failed
	miss bool  // err is a missing prerequisite, not a failure
}

// PGBin returns the directory holding initdb and postgres: pg_config
// --bindir, else the newest /usr/lib/postgresql/*/bin, else PATH.
func PGBin() (string, error) {
	var dirs []string
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		dirs = append(dirs, strings.TrimSpace(string(out)))
	}
	globbed, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Sort(sort.Reverse(sort.StringSlice(globbed)))
	dirs = append(dirs, globbed...)
	if p, err := exec.LookPath("initdb"); err == nil {
		dirs = append(dirs, filepath.Dir(p))
	}
	for _, d := range dirs {
		if isExec(filepath.Join(d, "initdb")) && isExec(filepath.Join(d, "pg_ctl")) && isExec(filepath.Join(d, "postgres")) {
			return d, nil
		}
	}
	return "", fmt.Errorf("PostgreSQL binaries not found (pg_config --bindir, /usr/lib/postgresql/*/bin, PATH)")
}

func isExec(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// postgresCredential is the user PostgreSQL runs as: the postgres system user
// when the tests run as root (PostgreSQL refuses to run as root), else nil
// (the tests' own user).
func postgresCredential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("running as root needs the postgres system user (scripts/pg.sh creates it): %v", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// privateClusterURL returns the URL of this binary's private cluster,
// starting it on first use, or ends the test through Missing or Fatal.
func privateClusterURL(t testing.TB) string {
	t.Helper()
	cluster.once.Do(startCluster)
	switch {
	case cluster.miss:
		Missing(t, "skipped: %v; install PostgreSQL or run scripts/test (or set %s)", cluster.err, EnvURL)
	case cluster.err != nil:
		t.Fatalf("storetest: private PostgreSQL cluster: %v", cluster.err)
	}
	return cluster.url
}

func startCluster() {
	bin, err := PGBin()
	if err != nil {
		cluster.err, cluster.miss = err, true
		return
	}
	cred, err := postgresCredential()
	if err != nil {
		cluster.err, cluster.miss = err, true
		return
	}
	// Not t.TempDir: it goes with one test, and its parents are 0700, which
	// the postgres user cannot cross. A short name keeps the socket path
	// under its 107-byte limit.
	dir, err := os.MkdirTemp("", "hya-pg-")
	if err == nil && cred != nil {
		err = os.Chown(dir, int(cred.Uid), int(cred.Gid))
	}
	if err != nil {
		cluster.err = err
		return
	}
	cluster.dir = dir
	data := filepath.Join(dir, "data")
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		cluster.err = fmt.Errorf("initdb: %v: %s", err, out)
		return
	}
	cluster.cmd = exec.Command(filepath.Join(bin, "postgres"), "-D", data, "-c", "listen_addresses=",
		"-c", "unix_socket_directories="+dir, "-c", "max_connections=300", "-c", "fsync=off")
	cluster.cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGINT}
	logFile, err := os.Create(filepath.Join(dir, "postgres.log"))
	if err != nil {
		cluster.err = err
		return
	}
	cluster.cmd.Stdout, cluster.cmd.Stderr = logFile, logFile
	// The parent-death signal follows the thread that started the child, so
	// that thread stays locked, and alive, until the server has exited.
	started := make(chan error, 1)
	cluster.done = make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer close(cluster.done)
		defer logFile.Close()
		if err := cluster.cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		cluster.cmd.Wait()
	}()
	if err := <-started; err != nil {
		cluster.err = fmt.Errorf("postgres: %v", err)
		return
	}
	cluster.url = "postgres://postgres@/postgres?host=" + dir + "&sslmode=disable"
	cluster.err = waitReady(cluster.url, dir)
}

// waitReady waits, like pg_ctl -w, until the server accepts connections.
func waitReady(u, dir string) error {
	db, err := sql.Open("postgres", u)
	if err != nil {
		return err
	}
	defer db.Close()
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		err := db.PingContext(ctx)
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-cluster.done:
			log, _ := os.ReadFile(filepath.Join(dir, "postgres.log"))
			return fmt.Errorf("postgres exited: %s", log)
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("postgres not ready after 60 s: %v", err)
		}
		time.Sleep(50 * time.Millisecond) // back off: never a busy loop
	}
}

// stopCluster stops the private cluster, if this binary started one, and
// removes its directory.
func stopCluster() {
	if cluster.cmd != nil && cluster.cmd.Process != nil {
		cluster.cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-cluster.done:
		case <-time.After(30 * time.Second):
			cluster.cmd.Process.Kill()
			<-cluster.done
		}
	}
	if cluster.dir != "" {
		os.RemoveAll(cluster.dir)
	}
}
