package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/voiceapi/voiceapi/bolt"
)

// TestServeOnALockedDataDirectory: serve on a bbolt file another process holds gives up
// (conventions §16: fast, never hanging) with a message naming the file, the process
// holding it (on Linux, from /proc/locks: here the test itself) and what to do.
func TestServeOnALockedDataDirectory(t *testing.T) {
	dir := t.TempDir()
	held, err := bolt.Open(dir, bolt.Options{PasswordCost: bcrypt.MinCost})
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	_, _, err = run(t, "", "serve", "--data", dir, "--addr", "127.0.0.1:0")
	if !errors.Is(err, bolt.ErrLocked) {
		t.Fatalf("serve on a locked file: %v, want ErrLocked", err)
	}
	msg := err.Error()
	for _, want := range []string{
		filepath.Join(dir, bolt.FileName),
		fmt.Sprintf("locked by process %d (", os.Getpid()),
		"stop that one first, or give this server another --data",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("the refusal %q does not say %q", msg, want)
		}
	}
	if strings.Contains(msg, "HTTP API") {
		t.Errorf("the refusal %q tells a server to use the HTTP API", msg)
	}
}
