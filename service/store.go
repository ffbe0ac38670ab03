package service

import (
	"context"
	"errors"
	"time"

	"github.com/voiceapi/voiceapi/data"
)

// Store is a storage engine: transactions over the records, their indexes and files. It
// knows nothing of roles, rules or HTTP; every method of Tx does what its name says and
// no more (its doc comment names the indexes and cascades it keeps).
type Store interface {
	// View runs fn in a read-only transaction that sees one consistent state.
	View(ctx context.Context, fn func(tx Tx) error) error
	// Update runs fn in a read-write transaction: what fn writes commits together,
	// durably (fsynced) before Update returns nil, or not at all. fn may run more than
	// once (a shared commit retries a failed member alone), so it must only touch tx.
	// When fn returns an error nothing it wrote is kept: the transaction is rolled back,
	// not committed (errNothingToWrite relies on that).
	Update(ctx context.Context, fn func(tx Tx) error) error
	// SourceFiles keeps the files of knowledge base sources, outside transactions.
	SourceFiles
	KeyUseRecorder
}

// errNothingToWrite is what an update's transaction function returns once it finds the
// request changes nothing (unchanged.go), having set its answer and written nothing: the
// store rolls the transaction back, as for any error, so a no-op commits nothing (on
// bbolt no meta page written, no fsync), and the services' store (claimingStore.Update)
// answers it as a success. It never leaves the service package.
var errNothingToWrite = errors.New("service: nothing to write")

// SharedStore is a store that several processes may write at once (PostgreSQL replicas),
// which coordination then has to go through: webhook claims are leased in storage.
type SharedStore interface {
	SharedByProcesses() bool
}

// Tx is one transaction's view of the records. Absent records come back as nil with a
// nil error; the services decide what that means (not found, a 422, nothing to do).
type Tx interface {
	EventTx
	LimitTx
	KnowledgeTx
	AccountTx
	WebhookTx
	DeliveryTx
	EventReadTx
	EventStreamTx
	AgentTx
	NumberTx
	CallTx
	CallSearchTx
	SubscriptionTx
	ConversationTx
	AnalysisTx
	JobTx
	AgentTestTx
	CallStartTx
	CampaignTx
}

// EventTx stores events: the outbox of conventions §11 and the audit chain of §17.
type EventTx interface {
	// EventHead returns the hash of the workspace's newest event, "" when it has none.
	EventHead(workspaceID string) (string, error)
	// AppendEvent stores e as its workspace's newest event, moves the workspace's chain
	// head to e.Hash and queues e for webhook delivery; the dispatcher is woken once the
	// transaction commits.
	AppendEvent(e *data.Event) error
	// RelinkEvent rewrites a stored event's prev_hash and hash (audit rekey), and
	// SetEventHead the workspace's chain head.
	RelinkEvent(id, prevHash, hash string) error
	SetEventHead(workspaceID, hash string) error
}

// LimitTx reads what quota checks need (conventions §13).
type LimitTx interface {
	// SubscriptionPlan returns the workspace's stored plan, nil when it has none (the
	// default, unlimited plan).
	SubscriptionPlan(workspaceID string) (*data.SubscriptionPlan, error)
	// CountUpTo counts the workspace's records of kind (a data.Limit* name other than
	// call minutes), stopping once it reaches upTo; upTo < 0 counts them all.
	CountUpTo(kind, workspaceID string, upTo int64) (int64, error)
	// EndedCallMillisInMonth returns the summed duration of the workspace's calls that
	// ended in the calendar month (UTC) holding t.
	EndedCallMillisInMonth(workspaceID string, t time.Time) (int64, error)
}
