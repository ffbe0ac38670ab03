package data

import "time"

// CallBucket is what the calls created in one bucket of an analytics series add up to:
// storage answers these from its rollups, the analytics service assembles totals, the
// series and the reasons from them.
type CallBucket struct {
	// Start is the bucket's first instant (UTC, aligned to the bucket width).
	Start time.Time
	// Calls, Ended and Failed count the calls, the ended ones and the failed ones.
	Calls, Ended, Failed int64
	// DurationMS sums the durations of the WithDuration calls that have one.
	DurationMS, WithDuration int64
	// Reasons counts the calls per disconnection_reason.
	Reasons map[string]int64
	// Versions are the counts per agent_version (an agent's buckets only; ForVersions).
	Versions map[string]int64
	// Cost and VersionCost are CallRollup's.
	Cost, VersionCost map[string]int64
}
