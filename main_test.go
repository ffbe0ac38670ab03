package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/voiceapi/voiceapi/internal/pgtest"
)

// TestMain stops the throw-away PostgreSQL cluster the tests started when they run on
// PostgreSQL (VOICEAPI_TEST_BACKEND=postgres), and removes the binary they shared.
func TestMain(m *testing.M) {
	code := pgtest.Run(m)
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// built is the real binary, built once for every test of the run that starts it.
var built struct {
	once     sync.Once
	dir, bin string
	out      []byte
	err      error
}

// voiceapiBinary returns the path of the real binary built from this checkout. The kill,
// crash, scale-out and docs tests each start it; one build serves them all, where each
// used to link its own (about 6 s of a loaded 2-core machine apiece). A test must not
// change the file: it only runs it.
func voiceapiBinary(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		if built.dir, built.err = os.MkdirTemp("", "voiceapi-test-bin-"); built.err != nil {
			return
		}
		built.bin = filepath.Join(built.dir, "voiceapi")
		built.out, built.err = exec.Command("go", "build", "-o", built.bin, ".").CombinedOutput()
	})
	if built.err != nil {
		t.Fatalf("go build: %v\n%s", built.err, built.out)
	}
	return built.bin
}
