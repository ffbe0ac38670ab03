package bolt

import (
	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// Buckets of numbers: the records, a unique index phone → id over every workspace, a
// workspace index, and an index per bound agent, scope "<ws>/<agent>", holding a number
// once whether it is bound inbound, outbound or both.
var (
	bucketNumbers        = []byte("numbers")
	bucketNumbersByPhone = []byte("numbers_by_phone")
	bucketNumbersByWS    = []byte("numbers_by_ws")
	bucketNumbersByAgent = []byte("numbers_by_agent")
)

func numberAgentScope(ws, agentID string) string { return ws + "/" + agentID }

func loadNumber(tx *bbolt.Tx, ws, id string) (*data.Number, error) {
	var n data.Number
	found, err := getJSON(tx.Bucket(bucketNumbers), []byte(id), &n)
	if err != nil {
		return nil, err
	}
	if !found || n.WorkspaceID != ws {
		return nil, data.NotFound("Number")
	}
	return &n, nil
}

// numberAgents returns the distinct agents n is bound to.
func numberAgents(n *data.Number) []string {
	var out []string
	if n.InboundAgentID != nil {
		out = append(out, *n.InboundAgentID)
	}
	if n.OutboundAgentID != nil && (n.InboundAgentID == nil || *n.OutboundAgentID != *n.InboundAgentID) {
		out = append(out, *n.OutboundAgentID)
	}
	return out
}

// putNumber writes n and moves its agent index entries from old's bindings to n's.
func putNumber(tx *bbolt.Tx, old, n *data.Number) error {
	byAgent := tx.Bucket(bucketNumbersByAgent)
	if old != nil {
		for _, a := range numberAgents(old) {
			if err := indexDelete(byAgent, numberAgentScope(n.WorkspaceID, a), n.ID); err != nil {
				return err
			}
		}
	}
	for _, a := range numberAgents(n) {
		if err := indexPut(byAgent, numberAgentScope(n.WorkspaceID, a), n.ID); err != nil {
			return err
		}
	}
	return putJSON(tx.Bucket(bucketNumbers), []byte(n.ID), n)
}

func deleteNumberTx(tx *bbolt.Tx, n *data.Number) error {
	for _, a := range numberAgents(n) {
		if err := indexDelete(tx.Bucket(bucketNumbersByAgent), numberAgentScope(n.WorkspaceID, a), n.ID); err != nil {
			return err
		}
	}
	if err := tx.Bucket(bucketNumbersByPhone).Delete([]byte(n.PhoneNumber)); err != nil {
		return err
	}
	if err := indexDelete(tx.Bucket(bucketNumbersByWS), n.WorkspaceID, n.ID); err != nil {
		return err
	}
	return tx.Bucket(bucketNumbers).Delete([]byte(n.ID))
}

// Number implements service.NumberTx.
func (t tx) Number(id string) (*data.Number, error) {
	var n data.Number
	found, err := getJSON(t.b.Bucket(bucketNumbers), []byte(id), &n)
	if err != nil || !found {
		return nil, err
	}
	return &n, nil
}

// Numbers implements service.NumberTx.
func (t tx) Numbers(ws string, f service.NumberSearch, req data.PageRequest) ([]*data.Number, data.Page, error) {
	index, scope := bucketNumbersByWS, ws
	if f.AgentID != "" {
		index, scope = bucketNumbersByAgent, numberAgentScope(ws, f.AgentID)
	}
	spec := listSpec{index: index, scope: scope}
	if f.Q != "" {
		// A bounded scan per page, as the agents' name search: a page may come back short
		// with a cursor resuming past what it looked at.
		spec.filter, spec.maxScan = "q\x00"+f.Q, f.MaxScan
		spec.keep = func(id string) bool {
			n, err := loadNumber(t.b, ws, id)
			return err == nil && data.NumberMatches(n, f.Q)
		}
	}
	ids, page, err := t.db.list(t.b, spec, req)
	if err != nil {
		return nil, page, err
	}
	list := make([]*data.Number, 0, len(ids))
	for _, id := range ids {
		n, err := loadNumber(t.b, ws, id)
		if err != nil {
			return nil, page, err
		}
		list = append(list, n)
	}
	return list, page, nil
}

// PhoneNumberTaken implements service.NumberTx.
func (t tx) PhoneNumberTaken(phone string) (bool, error) {
	return t.b.Bucket(bucketNumbersByPhone).Get([]byte(phone)) != nil, nil
}

// InsertNumber implements service.NumberTx.
func (t tx) InsertNumber(n *data.Number) (bool, error) {
	phones := t.b.Bucket(bucketNumbersByPhone)
	if phones.Get([]byte(n.PhoneNumber)) != nil {
		return false, nil
	}
	if err := putNumber(t.b, nil, n); err != nil {
		return false, err
	}
	if err := phones.Put([]byte(n.PhoneNumber), []byte(n.ID)); err != nil {
		return false, err
	}
	return true, indexPut(t.b.Bucket(bucketNumbersByWS), n.WorkspaceID, n.ID)
}

// PutNumber implements service.NumberTx.
func (t tx) PutNumber(n *data.Number) error {
	old, err := loadNumber(t.b, n.WorkspaceID, n.ID)
	if err != nil {
		return err
	}
	return putNumber(t.b, old, n)
}

// DeleteNumber implements service.NumberTx.
func (t tx) DeleteNumber(id string) error {
	n, err := t.Number(id)
	if err != nil || n == nil {
		return err
	}
	return deleteNumberTx(t.b, n)
}

// AgentRef implements service.NumberTx.
func (t tx) AgentRef(ws, agentID string) (bool, *int, error) {
	var row struct {
		WorkspaceID      string `json:"workspace_id"`
		PublishedVersion *int   `json:"published_version"`
	}
	found, err := getJSON(t.b.Bucket(bucketAgents), []byte(agentID), &row)
	if err != nil || !found || row.WorkspaceID != ws {
		return false, nil, err
	}
	return true, row.PublishedVersion, nil
}

// deleteWorkspaceNumbers removes every number of a deleted workspace (a cascade).
func deleteWorkspaceNumbers(tx *bbolt.Tx, ws string) error {
	for _, id := range scopeIDs(tx.Bucket(bucketNumbersByWS), ws) {
		n, err := loadNumber(tx, ws, id)
		if err != nil {
			return err
		}
		if err := deleteNumberTx(tx, n); err != nil {
			return err
		}
	}
	return nil
}
