package cli

import (
	"os"

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
