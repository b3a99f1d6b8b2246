package main

// pgCluster is a private, throwaway PostgreSQL cluster that one test owns,
// so it can restart it (`pg_ctl restart -m fast|immediate`) without
// touching the shared test cluster. It is started the way scripts/pg.sh
// starts one: initdb and pg_ctl from `pg_config --bindir` (or
// /usr/lib/postgresql/*/bin), as the `postgres` system user when the tests
// run as root, listening only on a unix socket in a directory of its own.

import (
	"bytes"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"heyaira/store/storetest"
)

type pgCluster struct {
	t    testing.TB
	bin  string
	dir  string // 0755; holds data/, the socket and the log
	data string
	log  string
}

// startPGCluster initialises and starts a cluster, stopped at t.Cleanup.
func startPGCluster(t testing.TB) *pgCluster {
	t.Helper()
	c := newPGCluster(t)
	if out, err := c.as(filepath.Join(c.bin, "initdb"), "-N", "-D", c.data, "-U", "postgres", "--auth=trust",
		"-E", "UTF8", "--locale=C.UTF-8"); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	c.start()
	return c
}

// newPGCluster makes the directory of a cluster that is not initialised
// yet, owned by the cluster's user; the cluster is stopped and the
// directory removed at t.Cleanup.
func newPGCluster(t testing.TB) *pgCluster {
	t.Helper()
	storetest.BaseURL(t) // the same precondition as every database test
	bin, err := storetest.PGBin()
	if err != nil {
		storetest.Missing(t, "skipped: %v; install PostgreSQL or run scripts/test", err)
	}
	// Not t.TempDir: its parents are 0700 and the postgres user must reach
	// the socket. A short path also keeps the socket under the 107-byte limit.
	dir, err := os.MkdirTemp("", "hya-pg-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o755)
	c := &pgCluster{t: t, bin: bin, dir: dir, data: filepath.Join(dir, "data"), log: filepath.Join(dir, "postgres.log")}
	if os.Geteuid() == 0 {
		if err := exec.Command("id", "postgres").Run(); err != nil {
			t.Fatalf("running as root needs the postgres system user (scripts/pg.sh creates it): %v", err)
		}
		if out, err := exec.Command("chown", "postgres:", dir).CombinedOutput(); err != nil {
			t.Fatalf("chown: %v %s", err, out)
		}
	}
	t.Cleanup(func() {
		c.pgctl("-m", "immediate", "-w", "stop")
		os.RemoveAll(dir)
	})
	return c
}

// start starts the cluster on its unix socket only.
func (c *pgCluster) start() {
	c.t.Helper()
	opts := fmt.Sprintf("-c listen_addresses='' -c unix_socket_directories='%s' -c fsync=off -c max_connections=200", c.dir)
	if out, err := c.pgctl("-w", "-t", "60", "-o", opts, "start"); err != nil {
		c.t.Fatalf("pg_ctl start: %v\n%s\n%s", err, out, c.logTail())
	}
}

// as runs a command as the cluster's owner.
func (c *pgCluster) as(name string, args ...string) ([]byte, error) {
	var cmd *exec.Cmd
	if os.Geteuid() == 0 {
		cmd = exec.Command("runuser", append([]string{"-u", "postgres", "--", name}, args...)...)
	} else {
		cmd = exec.Command(name, args...)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.Bytes(), err
}

func (c *pgCluster) pgctl(args ...string) ([]byte, error) {
	return c.as(filepath.Join(c.bin, "pg_ctl"), append([]string{"-D", c.data, "-l", c.log}, args...)...)
}

// restart runs `pg_ctl restart -m mode` and returns when the cluster
// accepts connections again, with the times the command started and ended.
func (c *pgCluster) restart(mode string) (start, end time.Time) {
	c.t.Helper()
	start = time.Now()
	out, err := c.pgctl("-m", mode, "-w", "-t", "60", "restart")
	end = time.Now()
	if err != nil {
		c.t.Fatalf("pg_ctl restart -m %s: %v\n%s\n%s", mode, err, out, c.logTail())
	}
	return start, end
}

// socket is the path of the cluster's unix socket.
func (c *pgCluster) socket() string { return filepath.Join(c.dir, ".s.PGSQL.5432") }

// url is the URL of database db, with application_name so that
// pg_stat_activity can count the server's connections.
func (c *pgCluster) url(db, app string) string {
	u := fmt.Sprintf("postgres://postgres@/%s?host=%s&sslmode=disable", db, c.dir)
	if app != "" {
		u += "&application_name=" + app
	}
	return u
}

// createDB creates database name and returns its URL.
func (c *pgCluster) createDB(name string) string {
	c.t.Helper()
	db, err := sql.Open("postgres", c.url("postgres", ""))
	if err != nil {
		c.t.Fatal(err)
	}
	defer db.Close()
	// The name is chosen by the test, never input.
	if _, err := db.Exec(`CREATE DATABASE ` + name); err != nil {
		c.t.Fatal(err)
	}
	return c.url(name, "")
}

func (c *pgCluster) logTail() string {
	b, _ := os.ReadFile(c.log)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}
