package service

import (
	"time"

	"github.com/voiceapi/voiceapi/data"
)

// CallTx stores calls with what is derived from them in the same transaction: the list
// indexes (per workspace, agent, number, direction, status), the hourly analytics rollups
// and the minutes of ended calls per month (the usage call_minutes_per_month counts).
type CallTx interface {
	// Call returns the call with id in any workspace, nil when there is none.
	Call(id string) (*data.Call, error)
	// Calls returns one newest-first page of the workspace's calls that match f. When
	// agentIDs is not nil only calls of those agents are listed (a caller limited to
	// some agents; empty lists nothing). A page's cost follows its length, not the number
	// of calls: filters are answered from indexes, and a page examines a bounded number
	// of index entries, ending early with a cursor when it reaches the bound.
	Calls(workspaceID string, agentIDs []string, f data.CallFilter, p data.PageRequest) ([]*data.Call, data.Page, error)
	// InsertCall stores a new call with its index entries and rollup, and counts its
	// duration in the month it ended when it is final. c.CreatedAt is the time its id
	// carries.
	InsertCall(c *data.Call) error
	// PutCall replaces a stored call, moving its index entries and rollup contribution
	// from the stored record to c, and counts its duration when c reaches a final status.
	PutCall(c *data.Call) error
	// DeleteCall removes the call with id, its index entries, its rollup contribution and
	// its search postings: terms are those it is indexed with (what SetCallTerms was last
	// given for it as next; fulltext.CallTerms of the stored call). The minutes it used
	// stay counted: they were consumed.
	DeleteCall(id string, terms map[string]int) error
	// CallRollups returns what the workspace's calls created in [from, to) add up to per
	// bucket of width step (an hour or a day, aligned in UTC), oldest first, empty
	// buckets left out; with agentID, only that agent's calls. It reads the hourly
	// rollups for whole hours and the calls themselves only in the partial hours at
	// either edge of the range.
	CallRollups(workspaceID, agentID string, from, to time.Time, step time.Duration) ([]data.CallBucket, error)
}
