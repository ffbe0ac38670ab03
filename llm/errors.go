package llm

import (
	"fmt"

	"github.com/voiceapi/voiceapi/data"
)

// Error is a provider's failure: an answer that is not a success, a connection that failed
// or was cut, a reply that cannot be read, or no answer in time. Message is safe to show:
// it never holds a credential.
type Error struct {
	Provider string
	// Status is the provider's HTTP status, 0 when none came (connection, timeout, a
	// malformed answer).
	Status  int
	Message string
	// Timeout is true when the provider did not answer in time (504 provider_timeout).
	Timeout bool
	// Retryable is true for failures worth trying again later: 408, 429, 5xx, timeouts,
	// cut connections.
	Retryable bool
}

func (e *Error) Error() string {
	if e.Timeout {
		return fmt.Sprintf("%s did not answer in time", e.Provider)
	}
	if e.Status != 0 {
		return fmt.Sprintf("%s answered %d: %s", e.Provider, e.Status, e.Message)
	}
	return fmt.Sprintf("%s failed: %s", e.Provider, e.Message)
}

// Unwrap makes a provider failure an application error, so every layer above reports it
// as 502 provider_error or 504 provider_timeout (never 500) without knowing this package.
func (e *Error) Unwrap() error {
	if e.Timeout {
		return data.Errorf(data.EPROVIDERTIMEOUT, "The language model provider %s did not answer in time.", e.Provider)
	}
	if e.Status != 0 {
		return data.Errorf(data.EPROVIDER, "The language model provider %s answered %d: %s", e.Provider, e.Status, e.Message)
	}
	return data.Errorf(data.EPROVIDER, "The language model provider %s failed: %s", e.Provider, e.Message)
}
