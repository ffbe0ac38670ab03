package service

import "github.com/voiceapi/voiceapi/data"

// deleteConversation deletes conversation id and what the Idempotency-Keys of its
// requests kept, in tx: the answers kept for its messages go, and those kept for its
// start are cut to their claims (status 0, no body), so that a retry of the start is
// told it was carried out (409) instead of being replayed the erased conversation's
// variables and opening, and still starts no second conversation
// (docs/conversations.md, "Gone with its call"). Every path that deletes a conversation
// calls it.
func deleteConversation(tx Tx, id string) error {
	if err := tx.DeleteConversation(id); err != nil {
		return err
	}
	if _, err := tx.DeleteConversationResponses(id); err != nil {
		return err
	}
	kept, err := tx.ConversationStartResponses(id)
	if err != nil {
		return err
	}
	for _, k := range kept {
		if k.Response.Status == 0 && len(k.Response.Body) == 0 {
			continue // a claim already
		}
		if err := tx.PutIdempotentResponse(k.TokenID, k.Key, claimOnly(k.Response)); err != nil {
			return err
		}
	}
	return nil
}

// claimOnly is r cut to its claim: what the request was (its hash, its agent, the
// conversation it started) without its answer. Its time stays r's, so it expires when r
// would have.
func claimOnly(r *data.IdempotentResponse) *data.IdempotentResponse {
	c := *r
	c.Status, c.Body, c.Header = 0, nil, nil
	return &c
}
