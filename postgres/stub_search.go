package postgres

// Placeholders until the call search index is written (service.CallSearchTx, whose doc
// comments are the contract; a postings table or a tsvector with a GIN index both fit):
// this file goes when it comes.

import "github.com/voiceapi/voiceapi/data"

func (t *tx) SetCallTerms(workspaceID, id string, terms map[string]int) error {
	panic("postgres: not written yet")
}

func (t *tx) SearchCalls(workspaceID string, agentIDs []string, f data.CallFilter, s data.CallSearch, p data.PageRequest) ([]*data.CallHit, data.Page, error) {
	panic("postgres: not written yet")
}
