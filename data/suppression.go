package data

import "context"

// PrefixSuppression starts the id of a suppression list entry.
const PrefixSuppression = "sup_"

// Suppression is a number the workspace never dials (conventions §25): no campaign's
// dial task is handed out for it, whenever it was added.
type Suppression struct {
	ID          string  `json:"id"`
	WorkspaceID string  `json:"workspace_id"`
	PhoneNumber string  `json:"phone_number"`
	Reason      *string `json:"reason"`
	CreatedAt   Time    `json:"created_at"`
}

// SuppressionCreate is the body of POST /api/v1/suppressions (and one CSV line of an
// import: Line set).
type SuppressionCreate struct {
	PhoneNumber string  `json:"phone_number"`
	Reason      *string `json:"reason"`
	Line        int     `json:"-"`
}

// SuppressionRows is the JSON body of POST /api/v1/suppressions/import (the CSV form's
// rows as a list).
type SuppressionRows struct {
	Rows []SuppressionCreate `json:"rows"`
}

// SuppressionImport is what a CSV import of the suppression list did.
type SuppressionImport struct {
	Rows       int64 `json:"rows"`
	Added      int64 `json:"added"`
	Duplicates int64 `json:"duplicates"`
}

// SuppressionService manages the workspace's suppression list (module call_history).
type SuppressionService interface {
	// AddSuppression adds a number; a number already listed is returned as it is.
	// Errors: validation_failed (a number that cannot be normalized to E.164).
	AddSuppression(ctx context.Context, in SuppressionCreate) (*Suppression, bool, error)
	// ImportSuppressions adds every row or none. Errors: validation_failed naming
	// rows.line_N.phone_number.
	ImportSuppressions(ctx context.Context, rows []SuppressionCreate) (*SuppressionImport, error)
	// Suppressions lists the list, newest first.
	Suppressions(ctx context.Context, req PageRequest) ([]*Suppression, Page, error)
	// DeleteSuppression removes an entry. Errors: not_found; forbidden for a caller
	// limited to some agents (it would lift the block for every agent).
	DeleteSuppression(ctx context.Context, id string) error
}
