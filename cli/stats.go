package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/server"
)

// dbStats reads the figures GET /metrics reports from bbolt. The size is the file's, from
// stat: opening a transaction to ask would itself count as one in the figures.
func dbStats(db *bolt.DB) func() server.DBStats {
	return func() server.DBStats {
		st := db.Bolt().Stats()
		out := server.DBStats{
			OpenReadTx:         st.OpenTxN,
			ReadTxTotal:        st.TxN,
			FreePages:          st.FreePageN,
			PendingPages:       st.PendingPageN,
			FreelistInuseBytes: st.FreelistInuse,
			PageAllocBytes:     st.TxStats.GetPageAlloc(),
			Writes:             st.TxStats.GetWrite(),
			WriteTime:          st.TxStats.GetWriteTime(),
			Spills:             st.TxStats.GetSpill(),
			SpillTime:          st.TxStats.GetSpillTime(),
			Splits:             st.TxStats.GetSplit(),
			Rebalances:         st.TxStats.GetRebalance(),
		}
		if fi, err := os.Stat(db.Bolt().Path()); err == nil {
			out.SizeBytes = fi.Size()
		}
		return out
	}
}

// NewStatsCommand builds `voiceapi stats`: where a stopped server's database file puts its
// bytes, bucket by bucket, and how much of it is free pages that `voiceapi compact` gives
// back. A running server reports its free pages on GET /metrics.
func NewStatsCommand() *cobra.Command {
	var loc location
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "stats",
		Short: "Show the database file's size, free pages and bytes per bucket (run against a stopped server)",
		Long: `Show where the database file's bytes go: its size, page size, pages used, free pages
and freelist, then for each bucket (heaviest first): keys, bytes of keys and values
(DATA), bytes of pages in use with their headers (INUSE, of which LEAF-INUSE in leaf
pages), branch and leaf pages, bytes of the pages it owns (ALLOC) and INUSE/ALLOC (FILL).
An inline bucket lives inside its parent's page and owns none. The file is opened
read-only and not changed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := loc.boltOnly("stats", "ask PostgreSQL: pg_total_relation_size per table, or pg_stat_user_tables (docs/scale-out.md)"); err != nil {
				return err
			}
			if err := requireDatabase(loc.dir); err != nil {
				return err
			}
			dir := loc.dir
			st, err := bolt.Stats(dir, adminOptions.LockTimeout)
			if err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(st)
			}
			printStats(cmd.OutOrStdout(), st)
			return nil
		},
	}
	loc.register(cmd.Flags())
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the figures as one JSON object")
	return cmd
}

func printStats(w io.Writer, st *bolt.FileStats) {
	fmt.Fprintf(w, "file:      %s\n", st.Path)
	fmt.Fprintf(w, "size:      %s, page size %d, %d pages used\n", sizeText(st.FileSize), st.PageSize, st.Pages)
	fmt.Fprintf(w, "free:      %d pages free, %d pending: %s; freelist %d bytes\n", st.FreePages, st.PendingPages, sizeText(st.FreeBytes), st.FreelistBytes)
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "BUCKET\tKEYS\tDATA\tINUSE\tLEAF-INUSE\tBRANCH\tLEAF\tALLOC\tFILL\t")
	line := func(b bolt.BucketStats) {
		fillText := fmt.Sprintf("%.0f%%", 100*b.Fill)
		if b.Inline {
			fillText = "inline"
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t\n", b.Name, b.Keys, b.DataBytes, b.InuseBytes, b.LeafInuse, b.BranchPages, b.LeafPages, b.AllocBytes, fillText)
	}
	for _, b := range st.Buckets {
		line(b)
	}
	line(st.Total)
	tw.Flush()
}
