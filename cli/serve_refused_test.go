package cli

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeRefusedAddressCreatesNothing: a start refused for its listen address (a taken
// port, a bad --addr, a taken --metrics-addr) fails before it opens the store, so a fresh
// data directory stays empty, and one that did not exist is not created.
func TestServeRefusedAddressCreatesNothing(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"taken port", []string{"--addr", taken.Addr().String()}, "in use"},
		{"bad address", []string{"--addr", "127.0.0.1:notaport"}, "--addr 127.0.0.1:notaport"},
		{"taken metrics port", []string{"--addr", "127.0.0.1:0", "--metrics-addr", taken.Addr().String()}, "--metrics-addr"},
	} {
		t.Run(c.name, func(t *testing.T) {
			empty := t.TempDir()
			missing := filepath.Join(t.TempDir(), "data")
			for _, dir := range []string{empty, missing} {
				_, _, err := run(t, "", append([]string{"serve", "--data", dir}, c.args...)...)
				if err == nil || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("serve %v: %v, want an error with %q", c.args, err, c.want)
				}
			}
			if entries, err := os.ReadDir(empty); err != nil || len(entries) != 0 {
				t.Errorf("the empty data directory after the refusal holds %v (%v), want nothing", entries, err)
			}
			if _, err := os.Stat(missing); !os.IsNotExist(err) {
				t.Errorf("a data directory that did not exist: %v after the refusal, want it still absent", err)
			}
		})
	}
}
