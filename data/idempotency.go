package data

import "context"

// IdempotentResponse is a successful response kept for replay under an Idempotency-Key.
type IdempotentResponse struct {
	RequestHash string            `json:"request_hash"`
	Status      int               `json:"status"`
	Header      map[string]string `json:"header"`
	Body        []byte            `json:"body"`
	CreatedAt   Time              `json:"created_at"`
}

// IdempotencyStore keeps responses per token and key for 24 hours (conventions §17).
type IdempotencyStore interface {
	IdempotentResponse(ctx context.Context, tokenID int64, key string) (*IdempotentResponse, error)
	SaveIdempotentResponse(ctx context.Context, tokenID int64, key string, resp *IdempotentResponse) error
}
