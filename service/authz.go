package service

import (
	"context"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

// authorize returns the caller when it meets need. The server has already resolved the
// caller's membership in the workspace it acts in; a caller without one gets not found
// from the lookups that follow, never a hint that the workspace exists. Without a
// principal (the CLI on a stopped server's data, background work) there is nothing to
// check: those callers are the operator.
func authorize(ctx context.Context, need data.Requirement) (*data.Principal, error) {
	p := data.PrincipalFrom(ctx)
	if p == nil {
		return nil, nil
	}
	if err := p.Allows(need); err != nil {
		return nil, err
	}
	return p, nil
}

// checkInput is the one place a service reports an input's faults: those of the input's
// rules (err) after those the server found decoding it (data.InputFaults), in one 422.
func checkInput(ctx context.Context, err error) error {
	return validate.Combine(data.InputFaults(ctx), err)
}
