package data

import "context"

// inputFaultsKey carries faults found while decoding a request, before its service ran.
type inputFaultsKey struct{}

// WithInputFaults returns ctx carrying err, the faults the server found while decoding the
// request's body or query (a validation_failed error), so that the service, which runs the
// rules, answers with one 422 naming every fault of the request. A nil err leaves ctx as is.
func WithInputFaults(ctx context.Context, err error) context.Context {
	if err == nil {
		return ctx
	}
	return context.WithValue(ctx, inputFaultsKey{}, err)
}

// InputFaults returns the decoding faults ctx carries, nil when there are none. A service
// that finds some refuses the request with them and its own rules' faults, before any
// storage is touched.
func InputFaults(ctx context.Context) error {
	err, _ := ctx.Value(inputFaultsKey{}).(error)
	return err
}
