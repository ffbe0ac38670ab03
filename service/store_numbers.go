package service

import "github.com/voiceapi/voiceapi/data"

// NumberTx stores phone numbers. A phone number is unique across the instance: storage
// keeps an index phone → id over every workspace and refuses a second record for it.
type NumberTx interface {
	// Number returns the number with id in any workspace, nil when there is none.
	Number(id string) (*data.Number, error)
	// Numbers returns one newest-first page of the workspace's numbers; with f.AgentID,
	// only those bound to that agent inbound or outbound (an index per bound agent); with
	// f.Q, those it matches (data.NumberMatches), no more than f.MaxScan looked at a page.
	Numbers(workspaceID string, f NumberSearch, p data.PageRequest) ([]*data.Number, data.Page, error)
	// InsertNumber stores a new number with its indexes (phone, workspace, bound agents).
	// It stores nothing and returns false when the phone number is already registered
	// in any workspace.
	InsertNumber(n *data.Number) (bool, error)
	// NumberByPhone returns the number registered for phone in any workspace (the phone
	// index), nil when there is none: how a call start finds the number dialed.
	NumberByPhone(phone string) (*data.Number, error)
	// PhoneNumberTaken reports whether the phone number is registered in any workspace.
	PhoneNumberTaken(phone string) (bool, error)
	// PutNumber replaces a stored number (its phone number and workspace unchanged),
	// moving its bound-agent index entries from the stored bindings to n's.
	PutNumber(n *data.Number) error
	// DeleteNumber removes the number with id and its index entries, freeing its phone
	// number.
	DeleteNumber(id string) error
	// AgentRef reports whether agentID is an agent of workspaceID and, when it is, its
	// published version (nil when never published): what a number's bindings and a
	// call's agent need to know of an agent.
	AgentRef(workspaceID, agentID string) (found bool, publishedVersion *int, err error)
}

// NumberSearch is a number list's filter (NumberTx.Numbers) and the bound of its search.
type NumberSearch struct {
	data.NumberFilter
	// MaxScan bounds the numbers one page of a Q search looks at, of the AgentID's when
	// set (0: no bound), on every engine, so that both give the same pages: a page then
	// ends short, even empty, with a cursor past the last number it looked at
	// (service/storetest, name_search_scan_bound).
	MaxScan int
}
