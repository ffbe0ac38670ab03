package server

import (
	"bytes"
	"io"
	"mime"
	"net/http"

	"github.com/voiceapi/voiceapi/data"
)

// maxNoBody bounds what refuseBody reads: an acceptable body is {} and white space, and
// anything longer is refused without reading the rest.
const maxNoBody = 1 << 10

// refuseBody checks the body of an action that takes none (route.NoBody): an empty body,
// or {} with white space around or inside it, goes through; anything else is refused
// before the action runs, so that a garbled client cannot rotate a secret or restore a
// version by accident. A body that is not empty needs Content-Type: application/json
// (415), as every JSON body does; one that is JSON but not {} is 400.
func refuseBody(r *http.Request) error {
	if r.Body == nil || r.Body == http.NoBody {
		return nil
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, maxNoBody+1))
	if err != nil {
		return bodyReadError(err, maxNoBody)
	}
	r.Body = http.NoBody
	if len(b) > maxNoBody {
		return data.Errorf(data.EMALFORMED, "This action takes no request body: send none, or {}.")
	}
	if len(bytes.Trim(b, " \t\r\n")) == 0 {
		return nil
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return data.Errorf(data.EMEDIATYPE, "A request body must be sent with Content-Type: application/json; this action takes none (send no body, or {}).")
	}
	if !emptyObject(b) {
		return data.Errorf(data.EMALFORMED, "This action takes no request body: send none, or {}.")
	}
	return nil
}

// emptyObject reports whether b is white space, or {} with white space around or inside.
func emptyObject(b []byte) bool {
	b = bytes.Trim(b, " \t\r\n")
	if len(b) == 0 {
		return true
	}
	if len(b) < 2 || b[0] != '{' || b[len(b)-1] != '}' {
		return false
	}
	return len(bytes.Trim(b[1:len(b)-1], " \t\r\n")) == 0
}
