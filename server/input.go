package server

import (
	"context"
	"net/http"

	"github.com/voiceapi/voiceapi/data"
)

// decodeInput reads the body strictly into dst for a service that runs the body's rules
// itself. A body that cannot be read, is not JSON or is too large is refused here; field
// faults (unknown members, wrong types) travel in the returned context to the service
// (data.WithInputFaults), which adds its rules' faults to them and answers with one 422
// naming every fault of the request, before touching storage.
func decodeInput(r *http.Request, dst any) (context.Context, error) {
	err := decodeBody(r, dst, nil)
	if err != nil && data.ErrorCode(err) != data.EINVALID {
		return nil, err
	}
	return data.WithInputFaults(r.Context(), err), nil
}
