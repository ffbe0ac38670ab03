package service

import (
	"time"

	"github.com/voiceapi/voiceapi/data"
)

// AnalysisTx keeps what post-call analysis and cost need beside the calls: each
// workspace's price table, each call's analysis values (data.AnalysisValues, derived by
// the service when a call's analysis is set) and the per-field hourly rollups built from
// them in the same transaction, so the figures are never behind the calls.
type AnalysisTx interface {
	// PriceTable returns the workspace's price table, nil when none was set.
	PriceTable(workspaceID string) (*data.PriceTable, error)
	// PutPriceTable stores the workspace's price table.
	PutPriceTable(workspaceID string, t *data.PriceTable) error
	// SetCallAnalysisValues makes next (nil: none; else of c's agent) the analysis values
	// of the stored call c: the contribution of the values stored before is taken from
	// the rollups of their hour and version, and next's added to its own. DeleteCall and
	// the workspace cascade remove a call's values with their contribution.
	SetCallAnalysisValues(c *data.Call, next *data.AnalysisValues) error
	// FieldRollups returns what the values of field of the agent's calls created in
	// [from, to) add up to per bucket of width step (an hour or a day, aligned in UTC) and
	// agent version, oldest first, empty buckets left out. It reads the hourly rollups
	// for whole hours and the calls' stored values only in the partial hours at either
	// edge of the range.
	FieldRollups(workspaceID, agentID, field string, from, to time.Time, step time.Duration) ([]data.FieldBucket, error)
}
