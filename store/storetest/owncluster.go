package storetest

import (
	"bytes"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// OwnCluster is a throwaway PostgreSQL cluster that one test owns, so it can
// restart, stop or promote it without touching the shared test cluster (the
// fault tests of docs/security-tests.md DB-01 and TP-06). It is started the
// way scripts/pg.sh starts one: initdb and pg_ctl from PGBin, as the postgres
// system user when the tests run as root, listening only on a unix socket in
// Dir.
type OwnCluster struct {
	t    testing.TB
	bin  string
	cred *syscall.Credential
	Dir  string // 0755; holds data/, the socket and the log
	data string
	log  string
}

// StartOwnCluster initialises and starts a cluster; it is stopped and its
// directory removed at t.Cleanup.
func StartOwnCluster(t testing.TB) *OwnCluster {
	t.Helper()
	c := newOwnCluster(t)
	if out, err := c.run(filepath.Join(c.bin, "initdb"), "-N", "-D", c.data, "-U", "postgres", "--auth=trust",
		"-E", "UTF8", "--locale=C.UTF-8"); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	c.start()
	return c
}

// newOwnCluster makes the directory of a cluster that is not initialised
// yet, owned by the cluster's user; the cluster is stopped and the
// directory removed at t.Cleanup.
func newOwnCluster(t testing.TB) *OwnCluster {
	t.Helper()
	BaseURL(t) // the same precondition as every database test
	bin, err := PGBin()
	if err != nil {
		Missing(t, "skipped: %v; install PostgreSQL or run scripts/test", err)
	}
	cred, err := postgresCredential()
	if err != nil {
		t.Fatal(err)
	}
	// Not t.TempDir: its parents are 0700 and the postgres user must reach
	// the socket. A short path also keeps the socket under the 107-byte limit.
	dir, err := os.MkdirTemp("", "hya-pg-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o755)
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			t.Fatal(err)
		}
	}
	c := &OwnCluster{t: t, bin: bin, cred: cred, Dir: dir, data: filepath.Join(dir, "data"), log: filepath.Join(dir, "postgres.log")}
	t.Cleanup(func() {
		c.PgCtl("-m", "immediate", "-w", "stop")
		os.RemoveAll(dir)
	})
	return c
}

// start starts the cluster on its unix socket only.
func (c *OwnCluster) start() {
	c.t.Helper()
	opts := fmt.Sprintf("-c listen_addresses='' -c unix_socket_directories='%s' -c fsync=off -c max_connections=200", c.Dir)
	if out, err := c.PgCtl("-w", "-t", "60", "-o", opts, "start"); err != nil {
		c.t.Fatalf("pg_ctl start: %v\n%s\n%s", err, out, c.LogTail())
	}
}

// run runs a PostgreSQL program as the cluster's owner.
func (c *OwnCluster) run(name string, args ...string) ([]byte, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = c.Dir // the postgres user may not reach the tests' directory
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.Bytes(), err
}

// PgCtl runs pg_ctl on the cluster ("-m", "immediate", "-w", "stop";
// "-w", "promote" …) and returns its output.
func (c *OwnCluster) PgCtl(args ...string) ([]byte, error) {
	return c.run(filepath.Join(c.bin, "pg_ctl"), append([]string{"-D", c.data, "-l", c.log}, args...)...)
}

// Restart runs `pg_ctl restart -m mode` and returns when the cluster
// accepts connections again, with the times the command started and ended.
func (c *OwnCluster) Restart(mode string) (start, end time.Time) {
	c.t.Helper()
	start = time.Now()
	out, err := c.PgCtl("-m", mode, "-w", "-t", "60", "restart")
	end = time.Now()
	if err != nil {
		c.t.Fatalf("pg_ctl restart -m %s: %v\n%s\n%s", mode, err, out, c.LogTail())
	}
	return start, end
}

// URL is the URL of database db, with application_name app (if not empty)
// so that pg_stat_activity can count a client's connections.
func (c *OwnCluster) URL(db, app string) string {
	u := fmt.Sprintf("postgres://postgres@/%s?host=%s&sslmode=disable", db, c.Dir)
	if app != "" {
		u += "&application_name=" + app
	}
	return u
}

// CreateDB creates database name (chosen by the test, never input) and
// returns its URL.
func (c *OwnCluster) CreateDB(name string) string {
	c.t.Helper()
	c.exec(`CREATE DATABASE ` + name)
	return c.URL(name, "")
}

// exec runs statements on the cluster's postgres database.
func (c *OwnCluster) exec(stmts ...string) {
	c.t.Helper()
	db, err := sql.Open("postgres", c.URL("postgres", ""))
	if err != nil {
		c.t.Fatal(err)
	}
	defer db.Close()
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			c.t.Fatalf("%s: %v", q, err)
		}
	}
}

// StartStandby makes a streaming standby of c with pg_basebackup (-R writes
// its primary_conninfo) and starts it; c then waits for it on every commit
// (synchronous_standby_names = '*'). It returns once the standby is
// synchronous.
func (c *OwnCluster) StartStandby() *OwnCluster {
	c.t.Helper()
	sb := newOwnCluster(c.t)
	if out, err := sb.run(filepath.Join(c.bin, "pg_basebackup"), "-h", c.Dir, "-U", "postgres", "-D", sb.data,
		"-R", "-X", "stream", "-c", "fast"); err != nil {
		c.t.Fatalf("pg_basebackup: %v\n%s", err, out)
	}
	sb.start()
	c.exec(`ALTER SYSTEM SET synchronous_standby_names = '*'`, `SELECT pg_reload_conf()`)
	db, err := sql.Open("postgres", c.URL("postgres", ""))
	if err != nil {
		c.t.Fatal(err)
	}
	defer db.Close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var n int
		db.QueryRow(`SELECT count(*) FROM pg_stat_replication WHERE sync_state = 'sync'`).Scan(&n)
		if n == 1 {
			return sb
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("the standby is not synchronous after 30s\n%s", sb.LogTail())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// LogTail is the last 4,000 bytes of the cluster's server log.
func (c *OwnCluster) LogTail() string {
	b, _ := os.ReadFile(c.log)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}
