package bolt

import (
	"bytes"
	"fmt"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/pagecursor"
)

// bucketCampaignsListed lists campaigns for GET /api/v1/campaigns (schema 26) in the
// scopes of list_by_agent.go: "<ws>\x00<id>" and "<ws>/a/<agent>\x00<id>" hold the
// campaign's status (the status its next write moves it from), and each of them with
// "/s/<status>" lists it empty. A page then reads only the campaigns it shows.
var bucketCampaignsListed = []byte("campaigns_listed")

func init() { allBuckets = append(allBuckets, bucketCampaignsListed) }

// listCampaign writes c's entries for its status, moved from the status they held
// (nothing when it did not change; a campaign's agent never does).
func listCampaign(tx *bbolt.Tx, c *data.Campaign) error {
	b := tx.Bucket(bucketCampaignsListed)
	old := bytes.Clone(b.Get(indexKey(c.WorkspaceID, c.ID)))
	if old != nil && string(old) == c.Status {
		return nil
	}
	for _, scope := range agentScopes(c.WorkspaceID, c.AgentID) {
		if old != nil {
			if err := indexDelete(b, listStatusScope(scope, string(old)), c.ID); err != nil {
				return err
			}
		}
		if err := b.Put(indexKey(scope, c.ID), []byte(c.Status)); err != nil {
			return err
		}
		if err := indexPut(b, listStatusScope(scope, c.Status), c.ID); err != nil {
			return err
		}
	}
	return nil
}

// unlistCampaign removes c's entries, those of the status they hold.
func unlistCampaign(tx *bbolt.Tx, c *data.Campaign) error {
	b := tx.Bucket(bucketCampaignsListed)
	status := string(b.Get(indexKey(c.WorkspaceID, c.ID)))
	for _, scope := range agentScopes(c.WorkspaceID, c.AgentID) {
		if err := indexDelete(b, scope, c.ID); err != nil {
			return err
		}
		if err := indexDelete(b, listStatusScope(scope, status), c.ID); err != nil {
			return err
		}
	}
	return nil
}

// unlistWorkspaceCampaigns removes a workspace's entries, every kind of scope.
func unlistWorkspaceCampaigns(tx *bbolt.Tx, ws string) error {
	b := tx.Bucket(bucketCampaignsListed)
	if err := deletePrefix(b, indexKey(ws, "")); err != nil {
		return err
	}
	return deletePrefix(b, []byte(ws+"/"))
}

// Campaigns implements service.CampaignTx: a walk of the scopes the filters and the
// caller's agents select (walkScopes); only the page's campaigns are read.
func (t tx) Campaigns(ws string, f data.CampaignFilter, agentIDs []string, req data.PageRequest) ([]*data.Campaign, data.Page, error) {
	// Named in cursors as before schema 26 (campaigns_by_ws), so that a cursor of before
	// the upgrade reads on, with the agents of a caller limited to some: a cursor is
	// refused to a caller who sees other agents.
	spec := listSpec{index: bucketCampaignsByWS, walked: bucketCampaignsListed, scope: ws,
		filter: pagecursor.BindAgents(f.AgentID+"/"+f.Status, agentIDs),
		scopes: walkScopes(ws, f.AgentID, f.Status, agentIDs)}
	ids, page, err := t.db.list(t.b, spec, req)
	if err != nil {
		return nil, page, err
	}
	list := make([]*data.Campaign, 0, len(ids))
	for _, id := range ids {
		c, err := readCampaign(t.b, id)
		if err != nil {
			return nil, page, err
		}
		if c == nil {
			return nil, page, fmt.Errorf("campaign %s is listed but not stored", id)
		}
		list = append(list, c)
	}
	return list, page, nil
}

// listCampaignsOfStore fills the campaign list from the stored campaigns (part of the
// schema 25 → 26 migration, in the transaction that raises the version, so a crash
// leaves schema 25 to fill it again), each record decoded for its workspace, agent and
// status only, the entries put in key order (putSorted).
func listCampaignsOfStore(tx *bbolt.Tx) error {
	var entries []indexEntry
	if err := tx.Bucket(bucketCampaigns).ForEach(func(k, v []byte) error {
		var c struct {
			WorkspaceID string `json:"workspace_id"`
			AgentID     string `json:"agent_id"`
			Status      string `json:"status"`
		}
		if err := jsonUnmarshal(v, &c); err != nil {
			return fmt.Errorf("decoding campaign %q: %w", k, err)
		}
		for _, scope := range agentScopes(c.WorkspaceID, c.AgentID) {
			entries = append(entries, indexEntry{indexKey(scope, string(k)), []byte(c.Status)},
				indexEntry{indexKey(listStatusScope(scope, c.Status), string(k)), nil})
		}
		return nil
	}); err != nil {
		return err
	}
	return putSorted(tx.Bucket(bucketCampaignsListed), entries)
}
