package server_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/server"
)

// slowClients is the number of slow-headers connections of TestSlowHeadersDoNotStarveClients.
const slowClients = 1000

// ensureFiles raises the soft limit of open files to n (a connection costs two here: the
// client's end and the server's), or skips the test when the hard limit is below it.
func ensureFiles(t *testing.T, n uint64) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Skipf("cannot read RLIMIT_NOFILE: %v", err)
	}
	if lim.Cur >= n {
		return
	}
	if lim.Max < n {
		t.Skipf("needs %d open files; RLIMIT_NOFILE's hard limit is %d (raise it with ulimit -Hn)", n, lim.Max)
	}
	old := lim
	lim.Cur = n
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Skipf("cannot raise RLIMIT_NOFILE to %d: %v", n, err)
	}
	t.Cleanup(func() { syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old) })
}

// TestSlowHeadersDoNotStarveClients opens 1,000 loopback connections that send a
// request's headers one byte a second. While they are all held, an ordinary client is
// served (its answer comes before the read-header timeout could free any of them; a
// fixed latency bound would be a benchmark's claim, and fail on a loaded machine); and the
// read-header timeout then closes every one of them.
// Everything is bounded: the slow clients stop when the test ends, at the latest after
// a few seconds.
func TestSlowHeadersDoNotStarveClients(t *testing.T) {
	if testing.Short() {
		t.Skip("opens 1,000 connections")
	}
	ensureFiles(t, 2*slowClients+500)
	e := newEnv(t)
	// Long enough that the slow connections are all still held when the ordinary client
	// asks, even when a loaded machine dials the thousand of them slowly (at 2 s, a slow dial
	// could leave too few held, and the test failed on its own precondition).
	const readHeader = 5 * time.Second
	addr := serveWithReadHeaderTimeout(t, e, readHeader)

	start := time.Now()
	slow := dialSlowClients(t, addr, readHeader)
	defer func() {
		close(slow.stop)
		slow.wg.Wait()
	}()
	dialed := time.Since(start)
	slow.checkOrdinaryClientServed(t, addr, readHeader, start, dialed)

	// The read-header timeout frees the slow connections.
	deadline := time.Now().Add(readHeader + 4*time.Second)
	for slow.closedByServer.Load() < slowClients && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if n := slow.closedByServer.Load(); n < slowClients {
		t.Fatalf("the server closed %d of %d slow-headers connections within %s", n, slowClients, readHeader+4*time.Second)
	}
}

// serveWithReadHeaderTimeout serves e's database on loopback with the read-header
// timeout readHeader until the test ends, and returns the address.
func serveWithReadHeaderTimeout(t *testing.T, e *env, readHeader time.Duration) string {
	t.Helper()
	srv := cli.NewServer(e.DB, slog.New(slog.NewJSONHandler(io.Discard, nil)), func(c *server.Config) {
		c.Timeouts = server.Timeouts{ReadHeader: readHeader}
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stopServer := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.ListenAndServe(ctx, ln, time.Second) }()
	t.Cleanup(func() {
		stopServer()
		<-served
	})
	return ln.Addr().String()
}

// slowLoris is slowClients connections sending their headers a byte a second until
// stop, and how many the server closed.
type slowLoris struct {
	stop           chan struct{}
	wg             sync.WaitGroup
	closedByServer atomic.Int32
}

// dialSlowClients dials the slow connections to addr; close stop and wait on wg to end
// them.
func dialSlowClients(t *testing.T, addr string, readHeader time.Duration) *slowLoris {
	t.Helper()
	s := &slowLoris{stop: make(chan struct{})}
	for range slowClients {
		c, err := net.DialTimeout("tcp", addr, 2*time.Second)
		if err != nil {
			close(s.stop)
			s.wg.Wait()
			t.Fatalf("dialing slow client: %v", err)
		}
		s.wg.Add(2)
		go func() { // sends a byte a second until stopped or cut off
			defer s.wg.Done()
			defer c.Close()
			req := []byte("GET /healthz HTTP/1.1\r\nHost: slow\r\nX-Slow: " + string(make([]byte, 64)))
			for i := 0; ; i++ {
				if _, err := c.Write(req[i%len(req) : i%len(req)+1]); err != nil {
					return
				}
				select {
				case <-s.stop:
					return
				case <-time.After(time.Second):
				}
			}
		}()
		go func() { // notices the server closing the connection
			defer s.wg.Done()
			c.SetReadDeadline(time.Now().Add(readHeader + 5*time.Second))
			// EOF, or a reset when the server closed with our bytes unread; only our
			// own read deadline means it was still open.
			var ne net.Error
			if _, err := io.Copy(io.Discard, c); err == nil || !(errors.As(err, &ne) && ne.Timeout()) {
				s.closedByServer.Add(1)
			}
		}()
	}
	return s
}

// checkOrdinaryClientServed checks that an ordinary client, on its own connections, is
// answered while every slow one is held (start is when the first was dialed).
func (s *slowLoris) checkOrdinaryClientServed(t *testing.T, addr string, readHeader time.Duration, start time.Time, dialed time.Duration) {
	t.Helper()
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	for i := range 3 {
		if i > 0 && time.Since(start) > readHeader-300*time.Millisecond {
			break
		}
		// The first request must meet the slow connections still held, or it proves
		// nothing about them.
		if held := slowClients - int(s.closedByServer.Load()); i == 0 && held < slowClients*9/10 {
			t.Fatalf("only %d slow connections were still open after dialing them all in %s", held, dialed)
		}
		t0 := time.Now()
		resp, err := client.Get("http://" + addr + "/healthz")
		took := time.Since(t0)
		if err != nil {
			t.Fatalf("ordinary request %d: %v", i, err)
		}
		resp.Body.Close()
		// A starved request waits for the read-header timeout to free a slow connection,
		// which cannot happen before readHeader has passed since the first was dialed: an
		// answer before then was served beside all of them, however slow the machine.
		if resp.StatusCode != 200 || time.Since(start) >= readHeader {
			t.Fatalf("ordinary request %d: status %d after %s, %s after the first slow connection (want 200 before %s, while they are all held), with %d slow connections dialed in %s",
				i, resp.StatusCode, took, time.Since(start), readHeader, slowClients, dialed)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
