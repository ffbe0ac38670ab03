package service

import "github.com/voiceapi/voiceapi/data"

// CallSearchTx keeps the transcript search index of calls: per workspace, an inverted
// index from a term to the calls holding it, newest first, with the term's frequency in
// each call. The service computes a call's terms (fulltext.CallTerms) and hands them to
// storage in the same write transaction as the call's insert or update, so the index is
// never behind the calls.
type CallSearchTx interface {
	// SetCallTerms makes next (term → its frequency in the call, 1 to 255) the indexed
	// terms of the stored call id of workspaceID, replacing old, the terms it is indexed
	// with now (what the last SetCallTerms for it was given as next; nil for a new call):
	// postings of terms no longer given are removed, the others added or their frequency
	// updated. Nil or empty next removes them all. A term of old that has no posting is
	// not an error (a call stored before the index existed has none), and an engine may
	// find a call's postings without old. Terms arrive normalized and are compared byte
	// for byte; an empty term or a frequency outside 1 to 255 in next is an error, and
	// nothing is written. DeleteCall, and the deletion of a workspace's calls, remove a
	// call's terms as well.
	SetCallTerms(workspaceID, id string, old, next map[string]int) error
	// SearchCalls returns one page of the workspace's calls that hold every term of
	// s.Terms (AND; none given is an empty page) and match f and agentIDs as Calls does.
	// Each hit carries Search.Score, the call's relevance to the terms (greater is better;
	// engines may rank differently, but a call holding a term more often ranks at least as
	// high as one holding it less often, the other terms and the rest being equal); the
	// snippet is left to the service.
	//
	// With s.Sort "created_at" the page is newest first, with the cursors and the scan
	// bound of Calls. With "relevance" the page is ordered by score, then newest first,
	// among the newest data.RelevanceWindow matches at or before the newest match seen by
	// the first page (the cursors carry that anchor, so calls added later do not shift the
	// pages; a call changed or deleted meanwhile can). Both cursors follow conventions §4.
	// Cursors are bound to the workspace, the filters, the terms and the sort: any other
	// list refuses them with a field error on "cursor".
	SearchCalls(workspaceID string, agentIDs []string, f data.CallFilter, s data.CallSearch, p data.PageRequest) ([]*data.CallHit, data.Page, error)
}
