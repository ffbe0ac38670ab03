package service

import (
	"time"

	"github.com/voiceapi/voiceapi/data"
)

// CampaignTx stores campaigns, their recipients and the suppression list (conventions
// §25, docs/campaigns.md). Storage keeps, beside the records: each campaign's due index
// (pending recipients by next_at), its lease index (in-progress recipients by
// lease_until), an index of in-progress calls (call id → recipient), and the workspace's
// open campaigns: those not final, and a final (canceled) one while it still has
// recipients in progress, whose leases a claim must still return. The service moves a
// recipient's state and its campaign's counts together; storage moves the indexes with
// the record.
type CampaignTx interface {
	// InsertCampaign stores a new campaign and its recipients (all pending).
	InsertCampaign(c *data.Campaign, recipients []*data.Recipient) error
	// Campaign returns one campaign, nil when there is none.
	Campaign(id string) (*data.Campaign, error)
	// PutCampaign stores a campaign's new state: it leaves the open index when its status
	// is final and its in-progress count is 0.
	PutCampaign(c *data.Campaign) error
	// Campaigns returns one newest-first page of the workspace's campaigns; agentIDs,
	// when not nil, keeps those of these agents only.
	Campaigns(workspaceID string, f data.CampaignFilter, agentIDs []string, req data.PageRequest) ([]*data.Campaign, data.Page, error)
	// OpenCampaigns returns the workspace's campaigns that are not final, and those final
	// ones whose in-progress count is above 0 (a claim returns their expired leases).
	OpenCampaigns(workspaceID string) ([]*data.Campaign, error)
	// Recipient returns one recipient, nil when there is none.
	Recipient(id string) (*data.Recipient, error)
	// PutRecipient stores a recipient's new state; old is its stored state, which tells
	// storage which index entries to move.
	PutRecipient(old, r *data.Recipient) error
	// Recipients returns one newest-first page of a campaign's recipients, those sel
	// selects; a filtered page reads O(per_page) records, whatever the campaign's size
	// (an index by campaign and state, moved with every PutRecipient).
	Recipients(campaignID string, sel StateSelection, req data.PageRequest) ([]*data.Recipient, data.Page, error)
	// DueRecipients returns up to limit pending recipients of the campaign whose next_at
	// is at or before now, earliest first.
	DueRecipients(campaignID string, now time.Time, limit int) ([]*data.Recipient, error)
	// NextDue returns the earliest next_at of the campaign's pending recipients; zero
	// when none is pending.
	NextDue(campaignID string) (time.Time, error)
	// ExpiredLeases returns up to limit in-progress recipients of the campaign whose
	// lease_until is before now, earliest first.
	ExpiredLeases(campaignID string, now time.Time, limit int) ([]*data.Recipient, error)
	// RecipientByCall returns the in-progress recipient whose attempt's call is callID,
	// nil when there is none.
	RecipientByCall(callID string) (*data.Recipient, error)
	// DeleteCampaign removes a campaign's record, out of every listing and index of its
	// workspace, and takes it off the workspace's kept count. Its recipients stay until
	// DeleteCampaignRecipients removes them, so that a campaign of any size goes at once.
	DeleteCampaign(c *data.Campaign) error
	// DeleteCampaignRecipients removes up to limit recipients of the campaign, with their
	// index entries, and returns how many it removed (fewer than limit: none is left).
	// DeleteCampaign lists the campaign as deleting (DeletingCampaigns); the call that
	// removes fewer than limit takes it off the list.
	DeleteCampaignRecipients(campaignID string, limit int) (int, error)
	// DeletingCampaigns returns up to limit deleted campaigns whose recipients are not
	// all removed yet, by campaign id, those after after (""): the list the check that
	// re-queues their delete job reads (requeueCampaignDeletes), read without a walk of
	// the recipients. A deleted workspace's entries go with it.
	DeletingCampaigns(after string, limit int) ([]DeletingCampaign, error)
	// KeptCampaignRecipients returns the workspace's kept count: data.Campaign.KeptWeight
	// summed over its campaigns. In a write transaction it holds until the transaction
	// ends, as CountSuppressions's does.
	KeptCampaignRecipients(workspaceID string) (int64, error)
	// AgentCampaigns returns the ids of the agent's campaigns OpenCampaigns returns.
	AgentCampaigns(workspaceID, agentID string) ([]string, error)

	// InsertSuppressions adds entries to their workspace's list and reports which were
	// added; an entry whose number is already listed is left out (not added).
	InsertSuppressions(list []*data.Suppression) ([]bool, error)
	// CountSuppressions returns how many numbers the workspace's list holds. In a write
	// transaction the count holds until it ends: a concurrent writer of the list waits or
	// is retried, so a bound checked against it cannot be passed by two writers together.
	CountSuppressions(workspaceID string) (int, error)
	// SuppressionByPhone returns the workspace's entry for an E.164 number, nil when none.
	SuppressionByPhone(workspaceID, phone string) (*data.Suppression, error)
	// SuppressedAmong returns which of the E.164 numbers the workspace's list holds.
	SuppressedAmong(workspaceID string, phones []string) (map[string]bool, error)
	// Suppression returns one entry by id, nil when there is none.
	Suppression(id string) (*data.Suppression, error)
	// Suppressions returns one newest-first page of the workspace's list.
	Suppressions(workspaceID string, req data.PageRequest) ([]*data.Suppression, data.Page, error)
	// DeleteSuppression removes an entry; none is no error.
	DeleteSuppression(s *data.Suppression) error
}

// StateSelection is which records a filtered list reads, by their stored state.
type StateSelection struct {
	// Filter is the list's state or status filter as the client gave it, "" for none (every
	// record, States unread). The page's cursors are bound to it, so a cursor taken under
	// another filter is refused, and one taken under this filter stays good when the
	// stored states it maps to change (a campaign canceled meanwhile).
	Filter string
	// States are the stored states read when Filter is given; none reads nothing.
	States []string
}

// DeletingCampaign is a deleted campaign whose recipients are not all removed yet
// (CampaignTx.DeletingCampaigns).
type DeletingCampaign struct {
	ID          string
	WorkspaceID string
	// AgentID is the campaign's agent, whose the job queued again is (as the delete's
	// was); for a campaign the storage upgrade listed (deleted before the list was kept),
	// its earlier delete job's agent while that job is kept, else "".
	AgentID string
}
