package bolt

import (
	"bytes"
	"encoding/binary"
	"time"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
)

// bucketIdempotencyByTime indexes the kept responses by the time each was kept:
// "<created_at, Unix nanoseconds, 8 bytes big-endian><idempotency key>" → nil, so that
// the purge reads the expired ones alone, oldest first. A response stored again (a claim
// replaced by its response) leaves its earlier entry, which the purge drops when it
// reaches it.
var bucketIdempotencyByTime = []byte("idempotency_by_time")

// bucketIdempotencyByStart lists the responses kept for a conversation's start:
// "<conversation id>\x00<token id><key>" → nil, so that its end finds them
// (ConversationStartResponses) and redacts them as it redacts the conversation.
var bucketIdempotencyByStart = []byte("idempotency_by_started_conversation")

// bucketIdempotencyByAgent lists the responses kept with an answer for the requests that
// acted on an agent (r.AgentID): "<agent id>\x00<token id><key>" → nil, so that the
// agent's delete finds them (AgentResponses) and cuts them to their claims. A claim is
// not listed: it holds nothing to cut. The name is schema 21's, which listed only the
// agent's conversations' answers (schema 22 lists every one).
var bucketIdempotencyByAgent = []byte("idempotency_by_agent_conversation")

// bucketIdempotencyByWorkspace lists the responses kept for requests made in a
// workspace (r.WorkspaceID), claims too: "<workspace id>\x00<token id><key>" → nil, so
// that the workspace's delete, and a member's removal (the member's tokens' alone, by
// the token id after the workspace's), find them (DeleteWorkspaceResponses). Schema 24;
// responses kept before name no workspace and are not listed.
var bucketIdempotencyByWorkspace = []byte("idempotency_by_workspace")

func init() {
	allBuckets = append(allBuckets, bucketIdempotencyByTime, bucketIdempotencyByStart, bucketIdempotencyByAgent, bucketIdempotencyByWorkspace)
}

// keptIndexes are the lists whose entries "<id>\x00<token id><key>" name a kept
// response, looked through by key for one that does not decode (deleteEntriesOfKeys).
var keptIndexes = [][]byte{bucketIdempotencyByConversation, bucketIdempotencyByStart, bucketIdempotencyByAgent, bucketIdempotencyByWorkspace}

// listedByAgent reports whether r is listed under its agent (bucketIdempotencyByAgent).
func listedByAgent(r *data.IdempotentResponse) bool {
	return r.AgentID != "" && r.Status != 0
}

func idempotencyKey(tokenID int64, key string) []byte {
	k := make([]byte, 8, 8+len(key))
	binary.BigEndian.PutUint64(k, uint64(tokenID))
	return append(k, key...)
}

// idempotencyTimeKey is the entry in bucketIdempotencyByTime of the response under key
// kept at t (before 1970 sorts as 1970: as expired).
func idempotencyTimeKey(t time.Time, key []byte) []byte {
	var ns int64 // UnixNano is undefined before 1678: compared first
	if t.After(time.Unix(0, 0)) {
		ns = t.UnixNano()
	}
	k := make([]byte, 8, 8+len(key))
	binary.BigEndian.PutUint64(k, uint64(ns))
	return append(k, key...)
}

// IdempotentResponse implements service.AccountTx.
func (t tx) IdempotentResponse(tokenID int64, key string) (*data.IdempotentResponse, error) {
	var r data.IdempotentResponse
	found, err := getJSON(t.b.Bucket(bucketIdempotency), idempotencyKey(tokenID, key), &r)
	if err != nil || !found {
		return nil, err
	}
	return &r, nil
}

// conversationResponseKey is r's entry in bucketIdempotencyByConversation:
// "<conversation id>\x00<token id><key>".
func conversationResponseKey(conversationID string, k []byte) []byte {
	return append(append([]byte(conversationID), 0), k...)
}

// PutIdempotentResponse implements service.AccountTx. A response to a message is listed
// under its conversation too, for DeleteConversationResponses, and one to a start under
// the conversation it made, for ConversationStartResponses.
func (t tx) PutIdempotentResponse(tokenID int64, key string, r *data.IdempotentResponse) error {
	k := idempotencyKey(tokenID, key)
	if r.ConversationID != "" {
		if err := t.b.Bucket(bucketIdempotencyByConversation).Put(conversationResponseKey(r.ConversationID, k), nil); err != nil {
			return err
		}
	}
	if r.StartedConversationID != "" {
		if err := t.b.Bucket(bucketIdempotencyByStart).Put(conversationResponseKey(r.StartedConversationID, k), nil); err != nil {
			return err
		}
	}
	if r.AgentID != "" {
		byAgent, entry := t.b.Bucket(bucketIdempotencyByAgent), conversationResponseKey(r.AgentID, k)
		put := byAgent.Delete // a response cut to its claim leaves the list
		if listedByAgent(r) {
			put = func(key []byte) error { return byAgent.Put(key, nil) }
		}
		if err := put(entry); err != nil {
			return err
		}
	}
	if r.WorkspaceID != "" {
		if err := t.b.Bucket(bucketIdempotencyByWorkspace).Put(conversationResponseKey(r.WorkspaceID, k), nil); err != nil {
			return err
		}
	}
	if err := putJSON(t.b.Bucket(bucketIdempotency), k, r); err != nil {
		return err
	}
	byTime := t.b.Bucket(bucketIdempotencyByTime)
	byTime.FillPercent = appendFill // kept in time order
	return byTime.Put(idempotencyTimeKey(r.CreatedAt.Time, k), nil)
}

// DeleteConversationResponses implements service.AccountTx. Their entries by time stay
// until the purge reaches them and finds no response kept before its time.
func (t tx) DeleteConversationResponses(conversationID string) (int, error) {
	byConv, responses := t.b.Bucket(bucketIdempotencyByConversation), t.b.Bucket(bucketIdempotency)
	prefix := conversationResponseKey(conversationID, nil)
	n := 0
	c := byConv.Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Seek(prefix) {
		var r data.IdempotentResponse
		if found, err := getJSON(responses, k[len(prefix):], &r); err != nil {
			return n, err
		} else if found && r.ConversationID == conversationID {
			if err := responses.Delete(k[len(prefix):]); err != nil {
				return n, err
			}
			if err := unlistByAgent(t.b, k[len(prefix):], &r); err != nil {
				return n, err
			}
			n++
		}
		if err := c.Delete(); err != nil {
			return n, err
		}
	}
	return n, nil
}

// deleteConversationKeptResponses deletes every response kept for a message to or the
// start of conversation id, with their entries: its workspace is being deleted, and with
// it the tokens that could replay them, so nothing of them is kept (not even a claim).
func deleteConversationKeptResponses(b *bbolt.Tx, id string) error {
	responses := b.Bucket(bucketIdempotency)
	prefix := conversationResponseKey(id, nil)
	for _, index := range [][]byte{bucketIdempotencyByConversation, bucketIdempotencyByStart} {
		c := b.Bucket(index).Cursor()
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Seek(prefix) {
			key := k[len(prefix):]
			var r data.IdempotentResponse
			// One that does not decode is deleted too: it could never be replayed.
			if err := jsonUnmarshal(responses.Get(key), &r); err != nil || r.ConversationID == id || r.StartedConversationID == id {
				if err := responses.Delete(key); err != nil {
					return err
				}
				if err := unlistByAgent(b, key, &r); err != nil {
					return err
				}
			}
			if err := c.Delete(); err != nil {
				return err
			}
		}
	}
	return nil
}

// DeleteTokenResponses implements service.AccountTx: the first limit responses of the
// token's key range of bucketIdempotency (each token's responses are one range: their
// keys begin with its id), with their entries (looked for by key, in one pass, for one
// that does not decode). Their entries by time stay until the purge reaches them and
// finds no response.
func (t tx) DeleteTokenResponses(tokenID int64, limit int) (int, error) {
	responses := t.b.Bucket(bucketIdempotency)
	prefix := idempotencyKey(tokenID, "")
	n := 0
	undecodable := map[string]bool{}
	c := responses.Cursor()
	for key, v := c.Seek(prefix); key != nil && bytes.HasPrefix(key, prefix) && n < limit; key, v = c.Seek(prefix) {
		key = bytes.Clone(key) // valid only until the bucket changes
		var r data.IdempotentResponse
		if err := jsonUnmarshal(v, &r); err != nil {
			undecodable[string(key)] = true
			r = data.IdempotentResponse{}
		}
		if err := t.deleteKeptResponse(key, &r); err != nil {
			return n, err
		}
		n++
	}
	if len(undecodable) == 0 {
		return n, nil
	}
	for _, index := range keptIndexes {
		if err := deleteEntriesOfKeys(t.b.Bucket(index), undecodable); err != nil {
			return n, err
		}
	}
	return n, nil
}

// unlistByAgent deletes the entries under its agent and its workspace of the response
// r kept under key (none when r names neither).
func unlistByAgent(b *bbolt.Tx, key []byte, r *data.IdempotentResponse) error {
	if r.WorkspaceID != "" {
		if err := b.Bucket(bucketIdempotencyByWorkspace).Delete(conversationResponseKey(r.WorkspaceID, key)); err != nil {
			return err
		}
	}
	if r.AgentID == "" {
		return nil
	}
	return b.Bucket(bucketIdempotencyByAgent).Delete(conversationResponseKey(r.AgentID, key))
}

// DeleteWorkspaceResponses implements service.AccountTx over
// bucketIdempotencyByWorkspace: from `from` (a key under ws's prefix, past it; nil: the
// first), up to limit entries under ws (and tokenID's id when not 0), each with its
// response when that is still ws's, and the response's other entries. An entry whose
// response is gone or names another workspace (rare: a key is one request's) goes
// uncounted; one kept after before (when not zero) stays, passed over. The walk stops at
// limit deleted or limit passed over, and says where: a member re-added who kept many
// answers since costs each of them one read, not one a batch.
func (t tx) DeleteWorkspaceResponses(ws string, tokenID int64, before time.Time, from []byte, limit int) (int, []byte, error) {
	responses := t.b.Bucket(bucketIdempotency)
	prefix := conversationResponseKey(ws, nil)
	if tokenID != 0 {
		prefix = conversationResponseKey(ws, idempotencyKey(tokenID, ""))
	}
	n, walked := 0, 0
	undecodable := map[string]bool{}
	c := t.b.Bucket(bucketIdempotencyByWorkspace).Cursor()
	at := append(bytes.Clone(prefix), from...) // deletes move the cursor: seek again each time
	k, _ := c.Seek(at)
	for ; k != nil && bytes.HasPrefix(k, prefix) && n < limit && walked-n < limit; k, _ = c.Seek(at) {
		walked++
		key := bytes.Clone(k[len(ws)+1:]) // valid only until the bucket changes
		v := responses.Get(key)
		var r data.IdempotentResponse
		decoded := v != nil && jsonUnmarshal(v, &r) == nil
		if decoded && r.WorkspaceID == ws && !before.IsZero() && r.CreatedAt.After(before) {
			at = append(bytes.Clone(k), 0) // kept since: stays
			continue
		}
		if err := c.Delete(); err != nil {
			return n, nil, err
		}
		if v == nil {
			continue
		}
		if !decoded {
			undecodable[string(key)] = true
		} else if r.WorkspaceID != ws {
			continue
		}
		if err := t.deleteKeptResponse(key, &r); err != nil {
			return n, nil, err
		}
		n++
	}
	for _, index := range keptIndexes {
		if len(undecodable) == 0 {
			break
		}
		if err := deleteEntriesOfKeys(t.b.Bucket(index), undecodable); err != nil {
			return n, nil, err
		}
	}
	if k == nil || !bytes.HasPrefix(k, prefix) {
		return n, nil, nil
	}
	return n, bytes.Clone(at[len(prefix):]), nil
}

// WorkspaceTokens implements service.AccountTx, from the index of tokens by workspace.
func (t tx) WorkspaceTokens(ws string) ([]int64, error) {
	var out []int64
	for _, key := range scopeIDs(t.b.Bucket(bucketAPIKeysByWS), ws) {
		k, err := getAPIKey(t.b, []byte(key))
		if err != nil {
			return nil, err
		}
		if k != nil {
			out = append(out, k.ID)
		}
	}
	return out, nil
}

// AgentResponses implements service.AccountTx. An entry whose response is
// gone, is a claim now or is another request's is passed over.
func (t tx) AgentResponses(agentID string, limit int) ([]data.KeptResponse, error) {
	return t.listedResponses(bucketIdempotencyByAgent, agentID, limit, func(r *data.IdempotentResponse) bool {
		return r.AgentID == agentID && listedByAgent(r)
	})
}

// listedResponses reads up to limit (0: all) of the responses an index lists under id,
// those keep accepts: an entry outlives its response's change of mind until the next
// write of that response, so each is checked against what it lists.
func (t tx) listedResponses(index []byte, id string, limit int, keep func(*data.IdempotentResponse) bool) ([]data.KeptResponse, error) {
	responses := t.b.Bucket(bucketIdempotency)
	prefix := conversationResponseKey(id, nil)
	var out []data.KeptResponse
	c := t.b.Bucket(index).Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix) && (limit == 0 || len(out) < limit); k, _ = c.Next() {
		key := k[len(prefix):]
		if len(key) < 8 {
			continue
		}
		var r data.IdempotentResponse
		if found, err := getJSON(responses, key, &r); err != nil {
			return nil, err
		} else if found && keep(&r) {
			out = append(out, data.KeptResponse{TokenID: int64(binary.BigEndian.Uint64(key)), Key: string(key[8:]), Response: &r})
		}
	}
	return out, nil
}

// indexIdempotencyByAgent fills the list of the responses kept with an agent
// (bucketIdempotencyByAgent) of a file written before it listed them all (the schema
// 21 → 22 migration; schema 21 listed the agent's conversations' only, which this lists
// again, a write of what is there). One that does not decode is left to the purge,
// which deletes it. It runs at open, in one transaction, so it reads only the two members
// it needs (not the kept body) and writes the list in key order (putSorted: in the order
// the responses are kept, 100,000 answers took 11.8 s, docs/performance.md).
func indexIdempotencyByAgent(tx *bbolt.Tx) error {
	var entries []indexEntry
	if err := tx.Bucket(bucketIdempotency).ForEach(func(k, v []byte) error {
		var r struct {
			Status  int    `json:"status"`
			AgentID string `json:"agent_id"`
		}
		if jsonUnmarshal(v, &r) == nil && listedByAgent(&data.IdempotentResponse{Status: r.Status, AgentID: r.AgentID}) {
			entries = append(entries, indexEntry{key: conversationResponseKey(r.AgentID, k)})
		}
		return nil
	}); err != nil {
		return err
	}
	return putSorted(tx.Bucket(bucketIdempotencyByAgent), entries)
}

// ConversationStartResponses implements service.AccountTx. An entry whose response is
// gone or is another request's now is passed over.
func (t tx) ConversationStartResponses(conversationID string) ([]data.KeptResponse, error) {
	return t.listedResponses(bucketIdempotencyByStart, conversationID, 0, func(r *data.IdempotentResponse) bool {
		return r.StartedConversationID == conversationID
	})
}

// DeleteIdempotentResponsesBefore implements service.AccountTx: up to limit entries of
// the index by time, before before, each with its response when that was kept before
// too (a later one under the same key stays, with its own entry), and the response's
// entries under its conversation and the conversation it started. A response that does
// not decode goes too: it could never be replayed. Its entries name a conversation it
// no longer says, so they are looked for by key, in one pass over both indexes for the
// batch (such a response is rare: written by no binary of ours).
func (t tx) DeleteIdempotentResponsesBefore(before time.Time, limit int) (int, error) {
	responses := t.b.Bucket(bucketIdempotency)
	end := idempotencyTimeKey(before, nil)
	n := 0
	undecodable := map[string]bool{}
	c := t.b.Bucket(bucketIdempotencyByTime).Cursor()
	for k, _ := c.First(); k != nil && bytes.Compare(k, end) < 0 && n < limit; k, _ = c.First() {
		key := k[8:]
		var r data.IdempotentResponse
		if v := responses.Get(key); v != nil {
			err := jsonUnmarshal(v, &r)
			if err != nil {
				undecodable[string(key)] = true
			}
			if err != nil || r.CreatedAt.Before(before) {
				if err := t.deleteKeptResponse(key, &r); err != nil {
					return n, err
				}
			}
		}
		if err := c.Delete(); err != nil {
			return n, err
		}
		n++
	}
	if len(undecodable) == 0 {
		return n, nil
	}
	for _, b := range keptIndexes {
		if err := deleteEntriesOfKeys(t.b.Bucket(b), undecodable); err != nil {
			return n, err
		}
	}
	return n, nil
}

// deleteKeptResponse deletes the response r kept under key, and its entries under its
// conversation, under the conversation it started and under its agent.
func (t tx) deleteKeptResponse(key []byte, r *data.IdempotentResponse) error {
	if err := t.b.Bucket(bucketIdempotency).Delete(key); err != nil {
		return err
	}
	if err := unlistByAgent(t.b, key, r); err != nil {
		return err
	}
	if r.ConversationID != "" {
		if err := t.b.Bucket(bucketIdempotencyByConversation).Delete(conversationResponseKey(r.ConversationID, key)); err != nil {
			return err
		}
	}
	if r.StartedConversationID != "" {
		return t.b.Bucket(bucketIdempotencyByStart).Delete(conversationResponseKey(r.StartedConversationID, key))
	}
	return nil
}

// deleteEntriesOfKeys deletes the entries "<conversation id>\x00<key>" of index whose key
// is in keys (a conversation id holds no 0 byte).
func deleteEntriesOfKeys(index *bbolt.Bucket, keys map[string]bool) error {
	var gone [][]byte
	err := index.ForEach(func(k, _ []byte) error {
		if i := bytes.IndexByte(k, 0); i >= 0 && keys[string(k[i+1:])] {
			gone = append(gone, bytes.Clone(k)) // k is valid only until the bucket changes
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, k := range gone {
		if err := index.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// indexIdempotencyByTime fills the index by time of a file written before it was kept
// (the schema 16 → 17 migration) from the kept responses; one that does not decode is
// entered as kept in 1970, so that the next purge deletes it, as the purge before did.
// An older binary would keep responses without their entries, which no purge would
// delete, so the version keeps it out.
func indexIdempotencyByTime(tx *bbolt.Tx) error {
	var entries []indexEntry
	if err := tx.Bucket(bucketIdempotency).ForEach(func(k, v []byte) error {
		var r struct {
			CreatedAt data.Time `json:"created_at"`
		}
		if err := jsonUnmarshal(v, &r); err != nil {
			r.CreatedAt = data.Time{}
		}
		entries = append(entries, indexEntry{key: idempotencyTimeKey(r.CreatedAt.Time, k)})
		return nil
	}); err != nil {
		return err
	}
	return putSorted(tx.Bucket(bucketIdempotencyByTime), entries) // in key order: see putSorted
}
