package service

import (
	"context"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

// checkInput is the one place a service reports an input's faults: those of the input's
// rules (err) after those the server found decoding it (data.InputFaults), in one 422.
func checkInput(ctx context.Context, err error) error {
	return validate.Combine(data.InputFaults(ctx), err)
}
