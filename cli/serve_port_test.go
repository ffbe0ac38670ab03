package cli

import (
	"context"
	"net"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestServeTakenPortKeepsTheBootstrap: a first start whose port is taken fails naming the
// address, prints no credentials and creates no user, so the next start on a free port
// creates the owner and prints its credentials, once.
func TestServeTakenPortKeepsTheBootstrap(t *testing.T) {
	dir := t.TempDir()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()

	// Through the real command line: the error reaches the user as serve returns it.
	stdout, _, err := run(t, "", "serve", "--data", dir, "--addr", taken.Addr().String())
	if err == nil || !strings.Contains(err.Error(), taken.Addr().String()) || !strings.Contains(err.Error(), "--addr") || !strings.Contains(err.Error(), "in use") {
		t.Fatalf("serve on a taken port: %v, want an error naming the address and --addr", err)
	}
	if strings.Contains(stdout, "password") || strings.Contains(stdout, "api token") {
		t.Fatalf("credentials printed by a server that never listened:\n%s", stdout)
	}
	db := openDir(t, dir)
	n, err := NewServices(db).Users.CountUsers(context.Background())
	db.Close()
	if err != nil || n != 0 {
		t.Fatalf("users after the failed start: %d (%v), want 0", n, err)
	}

	// The next start, on a free port, creates the owner and prints the credentials once.
	for start := 1; start <= 2; start++ {
		out, logs := &syncBuffer{}, &syncBuffer{}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- runServe(ctx, testServeOptions(t, dir), out, logs) }()
		eventually(t, "the listening log line", func() bool { return logAddr(logs.String(), "listening") != "" })
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("start %d: %v", start, err)
			}
		case <-time.After(15 * time.Second):
			t.Fatalf("start %d: serve did not stop", start)
		}
		printed := regexp.MustCompile(`(?m)^  password: +\S+$`).MatchString(out.String()) && strings.Contains(out.String(), "api token: ")
		if start == 1 && !printed {
			t.Fatalf("first start on a free port printed no credentials:\n%s", out.String())
		}
		if start == 2 && out.String() != "" {
			t.Fatalf("second start printed %q", out.String())
		}
	}
}
