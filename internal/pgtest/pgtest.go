// Package pgtest starts throw-away PostgreSQL clusters for tests: initdb in a temporary
// directory, a free loopback port, an unprivileged user when the tests run as root, and
// everything removed afterwards. Without PostgreSQL installed the tests that need it skip,
// naming the package to install, except under CI=true, where that is a failure.
package pgtest

import (
	"bytes"
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
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Cluster is a running PostgreSQL server owned by the test process.
type Cluster struct {
	dir  string
	port int
	cmd  *exec.Cmd
	next atomic.Int64
	// bin and args start the server again after Halt (Resume).
	bin  string
	args []string
	cred *syscall.Credential
}

var (
	shared     *Cluster
	sharedErr  error
	sharedOnce sync.Once
)

// Database returns the URL of a new, empty database on the package's shared cluster,
// started on first use; the database is dropped when the test ends. A package whose tests
// call it runs Main from its TestMain, so that the cluster stops with the tests.
func Database(t testing.TB) string {
	t.Helper()
	url, drop, err := sharedCluster(t).NewDatabase(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(drop)
	return url
}

// sharedCluster starts the package's shared cluster on first use; without PostgreSQL
// installed it skips t, or fails it under CI=true.
func sharedCluster(t testing.TB) *Cluster {
	t.Helper()
	sharedOnce.Do(func() { shared, sharedErr = Start() })
	if errors.Is(sharedErr, ErrNotInstalled) {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%v (CI=true: PostgreSQL tests may not be skipped)", sharedErr)
		}
		t.Skip(sharedErr)
	}
	if sharedErr != nil {
		t.Fatal(sharedErr)
	}
	return shared
}

// DatabaseFrom is Database with the new database a copy of template, a database of the
// shared cluster that prepare (given its URL) fills once per test process, on first use:
// a package whose tests each open a migrated database copies one migrated schema
// (tens of milliseconds) instead of applying every migration again (about 170 ms a
// database on 2 cores; docs/performance.md, "CI time"). prepare must close its connections.
func DatabaseFrom(t testing.TB, template string, prepare func(url string) error) string {
	t.Helper()
	c := sharedCluster(t)
	templatesMu.Lock()
	tm := templates[template]
	if tm == nil {
		tm = &templateDB{}
		templates[template] = tm
	}
	templatesMu.Unlock()
	tm.once.Do(func() {
		var url string
		url, tm.name, tm.err = c.newDatabase(context.Background(), "")
		if tm.err == nil {
			tm.err = prepare(url)
		}
	})
	if tm.err != nil {
		t.Fatalf("pgtest: preparing template database %s: %v", template, tm.err)
	}
	url, drop, err := c.NewDatabaseFrom(context.Background(), tm.name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(drop)
	return url
}

// templateDB is a database DatabaseFrom copies, prepared once.
type templateDB struct {
	once sync.Once
	name string
	err  error
}

var (
	templatesMu sync.Mutex
	templates   = map[string]*templateDB{}
)

// SharedLog returns what the package's shared cluster has logged so far (nil before it
// started): a test counts what the server reported, such as serialization failures.
func SharedLog() ([]byte, error) {
	if shared == nil {
		return nil, nil
	}
	return shared.Log()
}

// Log returns what the cluster has logged so far.
func (c *Cluster) Log() ([]byte, error) { return os.ReadFile(filepath.Join(c.dir, "postgres.log")) }

// Main runs the tests and then stops the shared cluster, if one was started.
func Main(m *testing.M) { os.Exit(Run(m)) }

// Run is Main without the exit: it returns the tests' exit code, for a TestMain that
// checks something more once the tests are done.
func Run(m *testing.M) int {
	code := m.Run()
	if shared != nil {
		shared.Stop()
	}
	return code
}

// ErrNotInstalled says that no PostgreSQL server binaries were found.
var ErrNotInstalled = errors.New("PostgreSQL is not installed: apt-get install postgresql (initdb and postgres are looked for in /usr/lib/postgresql/*/bin and on PATH)")

// binDir finds initdb and postgres: Debian's versioned directory (newest first), then PATH.
func binDir() (string, error) {
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
	return "", ErrNotInstalled
}

// Options tune a cluster that StartWith starts.
type Options struct {
	// Durable keeps PostgreSQL's durable defaults (fsync, synchronous_commit,
	// full_page_writes), for figures that stand beside bbolt's with fsync on (the bench
	// harness); test clusters turn them off.
	Durable bool
	// MaxConnections is max_connections; 200 when 0.
	MaxConnections int
}

// Start initializes and starts a test cluster in a new temporary directory.
func Start() (*Cluster, error) { return StartWith(Options{}) }

// StartWith is Start with o.
func StartWith(o Options) (*Cluster, error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "voiceapi-pg-")
	if err != nil {
		return nil, err
	}
	c := &Cluster{dir: dir}
	if err := c.start(bin, o); err != nil {
		c.Stop()
		return nil, err
	}
	return c, nil
}

func (c *Cluster) start(bin string, o Options) error {
	data := filepath.Join(c.dir, "data")
	if err := os.Mkdir(data, 0o700); err != nil {
		return err
	}
	cred, err := unprivileged(c.dir, data)
	if err != nil {
		return err
	}
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		return fmt.Errorf("initdb: %v\n%s", err, out)
	}
	if c.port, err = freePort(); err != nil {
		return err
	}
	maxConns := o.MaxConnections
	if maxConns == 0 {
		maxConns = 200
	}
	args := []string{"-D", data, "-p", strconv.Itoa(c.port), "-c", "listen_addresses=127.0.0.1",
		"-c", "unix_socket_directories=", "-c", "max_connections=" + strconv.Itoa(maxConns)}
	if !o.Durable {
		// A test cluster is thrown away, and fsync would only make the suite slower.
		args = append(args, "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
	}
	c.bin, c.args, c.cred = bin, args, cred
	return c.run()
}

// run starts the postgres server on the initialized data directory, its output appended
// to the cluster's log, and waits until it accepts connections.
func (c *Cluster) run() error {
	c.cmd = exec.Command(filepath.Join(c.bin, "postgres"), c.args...)
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred, Pdeathsig: syscall.SIGKILL}
	logFile, err := os.OpenFile(c.LogPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logFile.Close() // the child holds its own descriptor
	c.cmd.Stdout, c.cmd.Stderr = logFile, logFile
	if err := c.cmd.Start(); err != nil {
		return fmt.Errorf("starting postgres: %w", err)
	}
	return c.waitReady(30 * time.Second)
}

// LogPath is the server's log file: every error it reported, serialization failures
// included, with the statement that met it.
func (c *Cluster) LogPath() string { return filepath.Join(c.dir, "postgres.log") }

// SerializationFailures counts the serialization failures (SQLSTATE 40001) the server
// has logged since it was initialized. PostgreSQL counts them nowhere else
// (pg_stat_database has no column for them); each is one line of its log.
func (c *Cluster) SerializationFailures() (int, error) {
	log, err := os.ReadFile(c.LogPath())
	if err != nil {
		return 0, err
	}
	return bytes.Count(log, []byte("could not serialize access")), nil
}

// Halt stops the server the way an operator's restart does (a fast shutdown: open
// sessions are ended with SQLSTATE 57P01), keeping its data; Resume starts it again on
// the same port. Connections meanwhile are refused.
func (c *Cluster) Halt() error {
	if c.cmd == nil || c.cmd.Process == nil {
		return errors.New("pgtest: the cluster is not running")
	}
	c.cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- c.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		c.cmd.Process.Kill()
		<-done
	}
	c.cmd = nil
	return nil
}

// Resume starts a cluster that Halt stopped.
func (c *Cluster) Resume() error {
	if c.cmd != nil {
		return errors.New("pgtest: the cluster is running")
	}
	return c.run()
}

// unprivileged returns the credential to run PostgreSQL with: postgres refuses to run as
// root, so as root the directories go to the nobody user. Otherwise nil (the current user).
func unprivileged(dirs ...string) (*syscall.Credential, error) {
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

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// URL is the connection URL of database name.
func (c *Cluster) URL(name string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", c.port, name)
}

func (c *Cluster) waitReady(within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		conn, err := pgx.Connect(ctx, c.URL("postgres"))
		cancel()
		if err == nil {
			conn.Close(context.Background())
			return nil
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(c.LogPath())
			return fmt.Errorf("postgres did not accept connections within %s: %v\n%s", within, err, log)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// NewDatabase creates an empty database and returns its URL and a function that drops it.
func (c *Cluster) NewDatabase(ctx context.Context) (string, func(), error) {
	return c.NewDatabaseFrom(ctx, "")
}

// NewDatabaseFrom is NewDatabase with the new database a copy of template (a database no
// session is connected to); with "" an empty one.
func (c *Cluster) NewDatabaseFrom(ctx context.Context, template string) (string, func(), error) {
	url, name, err := c.newDatabase(ctx, template)
	if err != nil {
		return "", nil, err
	}
	drop := func() {
		conn, err := pgx.Connect(context.Background(), c.URL("postgres"))
		if err != nil {
			return
		}
		defer conn.Close(context.Background())
		conn.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	}
	return url, drop, nil
}

// newDatabase creates a database, a copy of template unless that is "", and returns its
// URL and name.
func (c *Cluster) newDatabase(ctx context.Context, template string) (string, string, error) {
	name := fmt.Sprintf("test_%d_%d", os.Getpid(), c.next.Add(1))
	conn, err := pgx.Connect(ctx, c.URL("postgres"))
	if err != nil {
		return "", "", err
	}
	defer conn.Close(ctx)
	create := "CREATE DATABASE " + name
	if template != "" {
		create += " TEMPLATE " + template
	}
	if _, err := conn.Exec(ctx, create); err != nil {
		return "", "", err
	}
	return c.URL(name), name, nil
}

// Stop ends the server and removes its directory.
func (c *Cluster) Stop() {
	if c.cmd != nil && c.cmd.Process != nil {
		c.cmd.Process.Signal(syscall.SIGINT) // fast shutdown
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
