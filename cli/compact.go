package cli

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/voiceapi/voiceapi/bolt"
)

// compactSwapGrace is bolt.CompactOptions.SwapGrace for the command; tests turn it off.
var compactSwapGrace time.Duration

// NewCompactCommand builds `voiceapi compact`: bbolt's compaction of a stopped server's
// database into a new file, swapped in atomically, to give back the space of large
// deletes (the free pages `voiceapi stats` counts).
func NewCompactCommand() *cobra.Command {
	var loc location
	var keepOld bool
	cmd := &cobra.Command{
		Use:   "compact",
		Short: "Rewrite the database file without its free pages (run against a stopped server)",
		Long: `Rewrite a stopped server's database into a new file holding only live data, then
swap it in: the new file is written beside voiceapi.db, fsynced and checked, renamed over
voiceapi.db and the directory fsynced. Interrupted at any moment, it leaves voiceapi.db
either the old file or the new one, whole. Needs free disk space for the new file (at
most the live data: see 'voiceapi stats'). --keep-old keeps the replaced file as
voiceapi.db.old-<UTC time>.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := loc.boltOnly("compact", "PostgreSQL reclaims space with VACUUM (autovacuum runs by itself; VACUUM FULL rewrites a table)"); err != nil {
				return err
			}
			if err := requireDatabase(loc.dir); err != nil {
				return err
			}
			dir := loc.dir
			return runCompact(dir, keepOld, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	loc.register(cmd.Flags())
	cmd.Flags().BoolVar(&keepOld, "keep-old", false, "keep the replaced file as voiceapi.db.old-<UTC time> instead of removing it")
	return cmd
}

func runCompact(dir string, keepOld bool, out, errOut io.Writer) error {
	// The total is known once the database is open and measured: the bar starts then.
	var bar *progress
	res, err := bolt.Compact(dir, bolt.CompactOptions{
		KeepOld:     keepOld,
		LockTimeout: adminOptions.LockTimeout,
		SwapGrace:   compactSwapGrace,
		Progress: func(done, total int64) {
			if bar == nil {
				bar = newProgress(errOut, total, "compacting")
			}
			if bar.bar != nil {
				bar.bar.Set64(done)
			}
		},
	})
	if bar != nil {
		bar.Done()
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "compacted %s: %s → %s (%d keys, %s of keys and values; free pages %s → %s)\n",
		dir, sizeText(res.Before), sizeText(res.After), res.Keys, sizeText(res.DataBytes), sizeText(res.FreeBefore), sizeText(res.FreeAfter))
	// The same size before and after read as a compaction that did nothing, or failed.
	if res.After >= res.Before {
		if res.FreeBefore <= res.FreeAfter && res.InUseAfter >= res.InUseBefore {
			fmt.Fprintln(out, "already compact: the database had no free pages to give back")
		} else {
			fmt.Fprintln(out, "the file keeps its size: bbolt grows a file in steps (doubling from 32 KiB up to 16 MiB) and the data still needs this one; the free pages given back are room to grow in")
		}
	}
	if res.OldPath != "" {
		fmt.Fprintf(out, "the old file is kept as %s\n", res.OldPath)
	}
	return nil
}

// sizeText writes n bytes exactly and, past a KiB, in binary units.
func sizeText(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d bytes", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%d bytes (%.1f %ciB)", n, float64(n)/float64(div), "KMGTP"[exp])
}
