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

// checkInputAndRefs is checkInput for an input that names other records (an agent, a
// number, a user, a test, a version): every failing field at once (conventions §2), so a
// request with a fault of its own is told its references' faults too, but for those at or
// under a path its own faults name (a list refused whole). refs is the check the write
// makes of them; it runs here, in a read transaction, only when the input has faults
// (otherwise the write runs it in its own transaction). refs must check the caller's
// access to what it reads before it reads references, as the write does. Only its 422
// faults join the answer: a record the caller may not see (not found, forbidden) leaves
// the input's 422, as the route gave before, and so does a failed read, since the request
// is refused either way and its values (which broke the rules) may be ones storage cannot
// even look up.
func (b *base) checkInputAndRefs(ctx context.Context, rules error, refs func(tx Tx) error) error {
	err := checkInput(ctx, rules)
	if data.ErrorCode(err) != data.EINVALID {
		return err
	}
	if refErr := b.store.View(ctx, refs); data.ErrorCode(refErr) == data.EINVALID {
		return validate.CombineUncovered(err, refErr)
	}
	return err
}

// checkInputAndRefsBeside is checkInputAndRefs for an input with a fault of a whole list
// that refuses none of its items (a rollout's weights, which must sum to 100): the
// references' faults under the paths beside names are told with it, not covered by it.
func (b *base) checkInputAndRefsBeside(ctx context.Context, rules error, refs func(tx Tx) error, beside ...string) error {
	err := checkInput(ctx, rules)
	if data.ErrorCode(err) != data.EINVALID {
		return err
	}
	refErr := b.store.View(ctx, refs)
	if data.ErrorCode(refErr) != data.EINVALID {
		return err
	}
	listFaults, rest := validate.SplitFaults(err, beside...)
	return validate.Combine(validate.CombineUncovered(rest, refErr), listFaults)
}
