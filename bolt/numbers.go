package bolt

import (
	"context"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

var _ data.NumberService = (*DB)(nil)

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

// checkBindings reports bound agents that are not agents of the workspace or that the
// caller may not see (existence is never revealed).
func checkBindings(ctx context.Context, tx *bbolt.Tx, ws string, in, out *string) error {
	p := data.PrincipalFrom(ctx)
	var errs validate.Errors
	for _, b := range []struct {
		path string
		id   *string
	}{{"inbound_agent_id", in}, {"outbound_agent_id", out}} {
		if b.id != nil && (!agentInWorkspace(tx, ws, *b.id) || p != nil && !p.CanSeeAgent(*b.id)) {
			errs.Addf(b.path, "The %s field must be an agent of this workspace.", b.path)
		}
	}
	return errs.Err()
}

// ListNumbers implements data.NumberService.
func (db *DB) ListNumbers(ctx context.Context, f data.NumberFilter, req data.PageRequest) ([]*data.Number, data.Page, error) {
	ws := data.PrincipalFrom(ctx).WorkspaceID
	var list []*data.Number
	var page data.Page
	err := db.view(func(tx *bbolt.Tx) error {
		index, scope := bucketNumbersByWS, ws
		if f.AgentID != "" {
			index, scope = bucketNumbersByAgent, numberAgentScope(ws, f.AgentID)
		}
		ids, pg, err := db.page(tx, index, scope, req)
		if err != nil {
			return err
		}
		page = pg
		list = make([]*data.Number, 0, len(ids))
		for _, id := range ids {
			n, err := loadNumber(tx, ws, id)
			if err != nil {
				return err
			}
			list = append(list, n)
		}
		return nil
	})
	return list, page, err
}

// CreateNumber implements data.NumberService.
func (db *DB) CreateNumber(ctx context.Context, in data.NumberCreate) (*data.Number, error) {
	if err := validate.NumberCreate(in); err != nil {
		return nil, err
	}
	ws := data.PrincipalFrom(ctx).WorkspaceID
	var n *data.Number
	err := db.update(func(tx *bbolt.Tx) error {
		if err := checkBindings(ctx, tx, ws, in.InboundAgentID, in.OutboundAgentID); err != nil {
			return err
		}
		phones := tx.Bucket(bucketNumbersByPhone)
		if phones.Get([]byte(in.PhoneNumber)) != nil {
			return data.Errorf(data.ECONFLICT, "The number %s is already registered.", in.PhoneNumber)
		}
		if err := db.checkQuota(tx, ws, quotaNumbers); err != nil {
			return err
		}
		now := db.timeNow()
		n = &data.Number{
			ID: db.ids.New(data.PrefixNumber), WorkspaceID: ws, PhoneNumber: in.PhoneNumber,
			Nickname: in.Nickname, Provider: in.Provider,
			InboundAgentID: in.InboundAgentID, OutboundAgentID: in.OutboundAgentID,
			CreatedAt: now, UpdatedAt: now,
		}
		if err := putNumber(tx, nil, n); err != nil {
			return err
		}
		if err := phones.Put([]byte(n.PhoneNumber), []byte(n.ID)); err != nil {
			return err
		}
		if err := indexPut(tx.Bucket(bucketNumbersByWS), ws, n.ID); err != nil {
			return err
		}
		_, err := db.recordEvent(ctx, tx, data.EventNumberCreated, ws, n)
		return err
	})
	if err != nil {
		return nil, err
	}
	return n, nil
}

// Number implements data.NumberService.
func (db *DB) Number(ctx context.Context, id string) (*data.Number, error) {
	ws := data.PrincipalFrom(ctx).WorkspaceID
	var n *data.Number
	err := db.view(func(tx *bbolt.Tx) error {
		var err error
		n, err = loadNumber(tx, ws, id)
		return err
	})
	return n, err
}

// UpdateNumber implements data.NumberService.
func (db *DB) UpdateNumber(ctx context.Context, id string, in data.NumberUpdate) (*data.Number, error) {
	if err := validate.NumberUpdate(in); err != nil {
		return nil, err
	}
	ws := data.PrincipalFrom(ctx).WorkspaceID
	var n *data.Number
	err := db.update(func(tx *bbolt.Tx) error {
		old, err := loadNumber(tx, ws, id)
		if err != nil {
			return err
		}
		if err := data.CheckIfMatch(data.IfMatch(ctx), old); err != nil {
			return err
		}
		next := *old
		if in.Nickname.Set {
			next.Nickname = in.Nickname.V
		}
		if in.Provider.Set {
			next.Provider = in.Provider.V
		}
		var inb, outb *string // only newly given bindings are checked: a kept one stays valid
		if in.InboundAgentID.Set {
			next.InboundAgentID, inb = in.InboundAgentID.V, in.InboundAgentID.V
		}
		if in.OutboundAgentID.Set {
			next.OutboundAgentID, outb = in.OutboundAgentID.V, in.OutboundAgentID.V
		}
		if err := checkBindings(ctx, tx, ws, inb, outb); err != nil {
			return err
		}
		next.UpdatedAt = db.timeNow()
		if err := putNumber(tx, old, &next); err != nil {
			return err
		}
		n = &next
		_, err = db.recordEvent(ctx, tx, data.EventNumberUpdated, ws, n)
		return err
	})
	if err != nil {
		return nil, err
	}
	return n, nil
}

// DeleteNumber implements data.NumberService.
func (db *DB) DeleteNumber(ctx context.Context, id string) error {
	ws := data.PrincipalFrom(ctx).CurrentWorkspaceID
	return db.update(func(tx *bbolt.Tx) error {
		n, err := loadNumber(tx, ws, id)
		if err != nil {
			return err
		}
		if err := data.CheckIfMatch(data.IfMatch(ctx), n); err != nil {
			return err
		}
		if err := deleteNumberTx(tx, n); err != nil {
			return err
		}
		_, err = db.recordEvent(ctx, tx, data.EventNumberDeleted, ws, n)
		return err
	})
}

// unbindAgentNumbers clears a deleted agent from the numbers bound to it (an agent delete
// hook), telling each change as number.updated.
func (db *DB) unbindAgentNumbers(tx *bbolt.Tx, ws, agentID string) error {
	for _, id := range scopeIDs(tx.Bucket(bucketNumbersByAgent), numberAgentScope(ws, agentID)) {
		old, err := loadNumber(tx, ws, id)
		if err != nil {
			return err
		}
		next := *old
		if next.InboundAgentID != nil && *next.InboundAgentID == agentID {
			next.InboundAgentID = nil
		}
		if next.OutboundAgentID != nil && *next.OutboundAgentID == agentID {
			next.OutboundAgentID = nil
		}
		next.UpdatedAt = db.timeNow()
		if err := putNumber(tx, old, &next); err != nil {
			return err
		}
		if _, err := db.recordEvent(context.Background(), tx, data.EventNumberUpdated, ws, &next); err != nil {
			return err
		}
	}
	return nil
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
