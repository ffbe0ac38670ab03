package postgres

// The call search index is not written for PostgreSQL yet (service.CallSearchTx, whose doc
// comments are the contract; a postings table or a tsvector with a GIN index both fit).
// Until it is, calls store no terms and a search answers errors.ErrUnsupported, which the
// storage suite reports as a skip: registering and listing calls work as before. This
// file goes when the index comes.

import (
	"errors"
	"fmt"

	"github.com/voiceapi/voiceapi/data"
)

// SetCallTerms keeps nothing yet (see above).
func (t *tx) SetCallTerms(workspaceID, id string, terms map[string]int) error { return nil }

// SearchCalls is not written yet (see above).
func (t *tx) SearchCalls(workspaceID string, agentIDs []string, f data.CallFilter, s data.CallSearch, p data.PageRequest) ([]*data.CallHit, data.Page, error) {
	return nil, data.Page{}, fmt.Errorf("postgres: transcript search is not written yet: %w", errors.ErrUnsupported)
}
