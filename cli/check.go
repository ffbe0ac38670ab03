package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/bolt"
)

// maxCheckFaults bounds how many faults `voiceapi check` prints: a badly damaged file can
// report one per page, and the first few say enough.
const maxCheckFaults = 20

// NewCheckCommand builds `voiceapi check`: bbolt's consistency check over a stopped
// server's database, for after a crash, a disk problem or a restore.
func NewCheckCommand() *cobra.Command {
	var loc location
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Check the database file's consistency (run against a stopped server)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := loc.boltOnly("check", "PostgreSQL checks its own pages (pg_amcheck); the records' constraints are the schema's"); err != nil {
				return err
			}
			if err := requireDatabase(loc.dir); err != nil {
				return err
			}
			dir := loc.dir
			return runCheck(dir, cmd.OutOrStdout())
		},
	}
	loc.register(cmd.Flags())
	return cmd
}

// errCorrupt is returned when the check finds faults, so the command exits non-zero.
var errCorrupt = errors.New("the database failed its consistency check")

// runCheck opens the file read-only (it writes nothing, not even the migrations Open would
// run, so it can examine a damaged file without making it worse), runs tx.Check and prints
// either "ok" with the figures checked or every fault up to maxCheckFaults.
func runCheck(dir string, out io.Writer) error {
	path := filepath.Join(dir, bolt.FileName)
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("no database at %s: %w", path, err)
	}
	// A read-only open takes a shared lock, which waits while a server holds the
	// exclusive one: fail fast with the same advice as the other admin commands.
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true, Timeout: adminOptions.LockTimeout})
	if errors.Is(err, bbolt.ErrTimeout) {
		return fmt.Errorf("%w: %s is locked (is `voiceapi serve` running on it?); stop the server first", bolt.ErrLocked, path)
	}
	if err != nil {
		// bbolt refuses a file whose meta pages are both invalid: that is a fault too.
		fmt.Fprintf(out, "voiceapi check: %s: FAILED: cannot open: %v\n", path, err)
		return fmt.Errorf("%w: %v", errCorrupt, err)
	}
	defer db.Close()
	started := time.Now()
	var faults []error
	total := 0
	var pages int64
	var buckets int
	err = db.View(func(tx *bbolt.Tx) error {
		pages = int64(tx.Size()) / int64(db.Info().PageSize)
		// The channel must be drained to the end: Check's goroutine holds the
		// transaction until it has sent every fault.
		for fault := range tx.Check() {
			total++
			if len(faults) < maxCheckFaults {
				faults = append(faults, fault)
			}
		}
		return tx.ForEach(func([]byte, *bbolt.Bucket) error { buckets++; return nil })
	})
	if err != nil {
		fmt.Fprintf(out, "voiceapi check: %s: FAILED: %v\n", path, err)
		return fmt.Errorf("%w: %v", errCorrupt, err)
	}
	if total > 0 {
		fmt.Fprintf(out, "voiceapi check: %s: FAILED: %s\n", path, plural(total, "fault"))
		for _, f := range faults {
			fmt.Fprintf(out, "  %v\n", f)
		}
		if total > len(faults) {
			fmt.Fprintf(out, "  ... and %d more\n", total-len(faults))
		}
		return errCorrupt
	}
	fmt.Fprintf(out, "voiceapi check: %s: ok (%d pages, %d top-level buckets, %s)\n",
		path, pages, buckets, time.Since(started).Round(time.Millisecond))
	return nil
}
