package server

import (
	"errors"
	"log/slog"
	"net/http"
	"syscall"

	"github.com/voiceapi/voiceapi/data"
)

// statusOf is the one table from error code to HTTP status (conventions §2). Anything not
// in it is a bug: a masked 500.
var statusOf = map[string]int{
	data.EMALFORMED:       http.StatusBadRequest,
	data.EUNAUTHORIZED:    http.StatusUnauthorized,
	data.EFORBIDDEN:       http.StatusForbidden,
	data.EQUOTA:           http.StatusForbidden,
	data.ENOTFOUND:        http.StatusNotFound,
	data.EMETHOD:          http.StatusMethodNotAllowed,
	data.ECONFLICT:        http.StatusConflict,
	data.EPRECONDITION:    http.StatusPreconditionFailed,
	data.ETOOLARGE:        http.StatusRequestEntityTooLarge,
	data.EMEDIATYPE:       http.StatusUnsupportedMediaType,
	data.EINVALID:         http.StatusUnprocessableEntity,
	data.ERATELIMITED:     http.StatusTooManyRequests,
	data.EUNAVAILABLE:     http.StatusServiceUnavailable,
	data.ESTORAGEFULL:     http.StatusInsufficientStorage,
	data.EINTERNAL:        http.StatusInternalServerError,
	data.EPROVIDER:        http.StatusBadGateway,
	data.EPROVIDERTIMEOUT: http.StatusGatewayTimeout,
	// missing_variables is a 422 with errors per variable (conventions §23).
	data.EMISSINGVARIABLES: http.StatusUnprocessableEntity,
	// The publish gate's refusals (conventions §22).
	data.ETESTSREQUIRED: http.StatusConflict,
	data.ETESTSFAILED:   http.StatusConflict,
	data.ENOTPUBLISHED:  http.StatusConflict,
	data.ECONCURRENCY:   http.StatusTooManyRequests,
}

// StatusOf returns the HTTP status for an error code.
func StatusOf(code string) int {
	if s, ok := statusOf[code]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// causes maps failures of the system below storage to the codes a client can act on: the
// one place that reads them. Storage returns such errors wrapped (errors.Is finds them).
var causes = []struct {
	cause error
	code  string
	msg   string
}{
	{syscall.ENOSPC, data.ESTORAGEFULL, "The server's storage is full: nothing was written. Retry once the operator has freed space; reads keep working."},
	{data.ErrStorageSuperseded, data.EUNAVAILABLE, supersededMessage},
	{data.ErrStorageUnavailable, data.EUNAVAILABLE, "The database is unavailable (restarting or unreachable). Retry the request in a few seconds; a create retried with the same Idempotency-Key is made only once."},
}

// supersededMessage answers a write (and /readyz) on a replica whose database a newer
// voiceapi has migrated (postgres/fence.go): the load balancer takes it out, so a retry
// reaches an upgraded replica.
const supersededMessage = "The database was upgraded by a newer voiceapi: this replica runs an older version and no longer writes; nothing was written. Retry the request in a few seconds (an upgraded replica answers it); the operator must replace this replica with the new version."

// statusClientClosedRequest is nginx's status for a request its client closed before the
// answer: the access log and metrics count it apart from the server's own failures.
const statusClientClosedRequest = 499

// unavailableRetryAfter is the Retry-After, in seconds, of a 503 that sets none itself:
// about the time a database restart or a load balancer's health check takes.
const unavailableRetryAfter = "2"

// classify turns an error with a known cause into its application error.
func classify(err error) error {
	var e *data.Error
	if errors.As(err, &e) {
		return err
	}
	for _, c := range causes {
		if errors.Is(err, c.cause) {
			return data.Errorf(c.code, "%s", c.msg)
		}
	}
	return err
}

// errorBody is the JSON shape of every failure.
type errorBody struct {
	Message string              `json:"message"`
	Code    string              `json:"code"`
	Errors  map[string][]string `json:"errors,omitempty"`
}

// writeError sends err in the error shape. Internal errors are logged with the request id
// and masked: the client sees the id, nothing internal.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	if known := classify(err); known != err {
		if !data.LoggedByStorage(err) {
			// The operator must hear of it: clients only learn to retry later.
			s.log.ErrorContext(r.Context(), "request refused by the system below storage", slog.String("request_id", requestIDFrom(r.Context())),
				slog.String("code", data.ErrorCode(known)), slog.String("error", err.Error()))
		}
		err = known
	}
	code := data.ErrorCode(err)
	status := StatusOf(code)
	if gone := r.Context().Err(); status == http.StatusInternalServerError && gone != nil && errors.Is(err, gone) {
		// The client went away and the storage call stopped with it: nothing failed here
		// and nobody reads the answer. Logged as nginx's 499, not as an internal error.
		s.log.InfoContext(r.Context(), "client closed the request", slog.String("request_id", requestIDFrom(r.Context())))
		w.WriteHeader(statusClientClosedRequest)
		return
	}
	body := errorBody{Message: data.ErrorMessage(err), Code: code}
	if status == http.StatusInternalServerError {
		reqID := requestIDFrom(r.Context())
		s.log.ErrorContext(r.Context(), "internal error", slog.String("request_id", reqID), slog.String("error", err.Error()))
		body = errorBody{Message: "Internal error; quote request id " + reqID + " when reporting it.", Code: data.EINTERNAL}
	}
	var e *data.Error
	if errors.As(err, &e) && status == http.StatusUnprocessableEntity {
		body.Errors = e.Fields
		if body.Errors == nil {
			body.Errors = map[string][]string{}
		}
	}
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="voiceapi"`)
	}
	if code == data.ECONCURRENCY {
		w.Header().Set("Retry-After", concurrencyRetryAfter)
	}
	if status == http.StatusServiceUnavailable && w.Header().Get("Retry-After") == "" {
		w.Header().Set("Retry-After", unavailableRetryAfter)
	}
	writeJSON(w, status, body)
}
