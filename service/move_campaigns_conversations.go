package service

import (
	"math"

	"github.com/voiceapi/voiceapi/data"
)

// campaigns copies the workspace's campaigns, each with its recipients as they stand
// (pending, leased with their registered call, finished), in one write: a campaign
// running when its node was stopped goes on dialing from the destination, and a lease
// that ran out meanwhile is given back by the next claim, as after any stop.
func (m *mover) campaigns(tx Tx, ws string) error {
	page := func(req data.PageRequest) ([]*data.Campaign, data.Page, error) {
		return tx.Campaigns(ws, data.CampaignFilter{}, nil, req)
	}
	return each(page, func(c *data.Campaign) error {
		var recipients []*data.Recipient
		of := func(req data.PageRequest) ([]*data.Recipient, data.Page, error) {
			return tx.Recipients(c.ID, StateSelection{}, req)
		}
		if err := each(of, func(r *data.Recipient) error {
			recipients = append(recipients, r)
			return nil
		}); err != nil {
			return err
		}
		m.counts["campaign_recipients"] += len(recipients)
		return m.put("campaigns", func(d Tx) error { return d.InsertCampaign(c, recipients) })
	})
}

// suppressions copies the workspace's suppression list: numbers that asked not to be
// called must stay uncalled after the move.
func (m *mover) suppressions(tx Tx, ws string) error {
	page := func(req data.PageRequest) ([]*data.Suppression, data.Page, error) { return tx.Suppressions(ws, req) }
	return each(page, func(s *data.Suppression) error {
		return m.put("suppressions", func(d Tx) error {
			_, err := d.InsertSuppressions([]*data.Suppression{s})
			return err
		})
	})
}

// conversations copies the workspace's conversations with their messages, open ones
// too (they go on, or expire, on the destination); an ended one's call came with the
// calls. One the upgrade listed to redact and its job had not reached yet is listed on
// the destination too, where the moved job redacts it.
func (m *mover) conversations(tx Tx, ws string) error {
	listed, err := tx.ConversationsToRedact(ws, math.MaxInt32)
	if err != nil {
		return err
	}
	page := func(req data.PageRequest) ([]*data.StoredConversation, data.Page, error) {
		return tx.ListConversations(ws, data.ConversationFilter{}, nil, req)
	}
	if err := each(page, func(c *data.StoredConversation) error {
		items, err := tx.ConversationItems(c.ID)
		if err != nil {
			return err
		}
		return m.put("conversations", func(d Tx) error { return d.InsertConversation(c, items) })
	}); err != nil {
		return err
	}
	for _, id := range listed {
		if err := m.put("conversations_to_redact", func(d Tx) error { return d.ListConversationToRedact(ws, id) }); err != nil {
			return err
		}
	}
	return nil
}
