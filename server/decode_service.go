package server

import (
	"net/http"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

// decodeForService decodes a body whose rules the service checks. The service is not
// called when the decoder already found faults, so then the body's rules run here, to
// name every fault in one 422; either way they run once per request.
func decodeForService(r *http.Request, dst any, rules func() error) error {
	err := decodeBody(r, dst, nil)
	if data.ErrorCode(err) == data.EINVALID {
		return validate.Combine(err, rules())
	}
	return err
}
