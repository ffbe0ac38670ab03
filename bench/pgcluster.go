package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// pgCluster is a throw-away PostgreSQL server the harness started for -postgres: initdb
// in a temporary directory, a free loopback port, the nobody user when run as root (the
// approach of internal/pgtest). Unlike the test clusters it keeps PostgreSQL's durable
// defaults (fsync on, synchronous_commit on, full_page_writes on): its figures stand
// beside bbolt's with fsync on.
type pgCluster struct {
	dir  string
	port int
	cmd  *exec.Cmd
}

// pgBinDir finds initdb and postgres: Debian's versioned directory (newest first), then PATH.
func pgBinDir() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Sort(sort.Reverse(sort.StringSlice(dirs)))
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", errors.New("-postgres: PostgreSQL is not installed (apt-get install postgresql), or pass -database-url")
}

// startPGCluster initializes and starts a cluster in a new temporary directory of its
// own (the harness's work directory is root's, closed to nobody). maxConns is PostgreSQL's
// max_connections: the replicas' pools together, and room for the harness.
func startPGCluster(maxConns int) (*pgCluster, error) {
	bin, err := pgBinDir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "voiceapi-bench-pg-")
	if err != nil {
		return nil, err
	}
	c := &pgCluster{dir: dir}
	data := filepath.Join(c.dir, "data")
	if err := os.Mkdir(data, 0o700); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	cred, err := pgCredential(c.dir, data)
	if err != nil {
		c.stop()
		return nil, err
	}
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		c.stop()
		return nil, fmt.Errorf("initdb: %v\n%s", err, out)
	}
	addr, err := freeAddr()
	if err != nil {
		c.stop()
		return nil, err
	}
	_, port, _ := net.SplitHostPort(addr)
	c.port, _ = strconv.Atoi(port)
	c.cmd = exec.Command(filepath.Join(bin, "postgres"), "-D", data, "-p", port,
		"-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=",
		"-c", "max_connections="+strconv.Itoa(maxConns))
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGKILL}
	logFile, err := os.Create(filepath.Join(c.dir, "postgres.log"))
	if err != nil {
		c.stop()
		return nil, err
	}
	defer logFile.Close() // the child keeps its own descriptor
	c.cmd.Stdout, c.cmd.Stderr = logFile, logFile
	if err := c.cmd.Start(); err != nil {
		c.cmd = nil
		c.stop()
		return nil, fmt.Errorf("starting postgres: %w", err)
	}
	if err := c.waitReady(30 * time.Second); err != nil {
		c.stop()
		return nil, err
	}
	return c, nil
}

// pgCredential is the user PostgreSQL runs as: it refuses root, so as root the
// directories go to nobody; otherwise nil (the current user).
func pgCredential(dirs ...string) (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("nobody")
	if err != nil {
		return nil, fmt.Errorf("running as root, PostgreSQL needs an unprivileged user: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	for _, d := range dirs {
		if err := os.Chown(d, uid, gid); err != nil {
			return nil, err
		}
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// url is the connection URL of database name.
func (c *pgCluster) url(name string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", c.port, name)
}

func (c *pgCluster) waitReady(within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		conn, err := pgx.Connect(ctx, c.url("postgres"))
		cancel()
		if err == nil {
			conn.Close(context.Background())
			return nil
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(c.dir, "postgres.log"))
			return fmt.Errorf("postgres did not accept connections within %s: %v\n%s", within, err, log)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// createDatabase makes an empty database and returns its URL.
func (c *pgCluster) createDatabase(name string) (string, error) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, c.url("postgres"))
	if err != nil {
		return "", err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", err
	}
	return c.url(name), nil
}

// stop ends the server (fast shutdown) and removes its directory.
func (c *pgCluster) stop() {
	if c.cmd != nil && c.cmd.Process != nil {
		c.cmd.Process.Signal(syscall.SIGINT)
		done := make(chan struct{})
		go func() { c.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			c.cmd.Process.Kill()
			<-done
		}
	}
	os.RemoveAll(c.dir)
}
