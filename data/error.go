// Package data holds voiceapi's domain: the records, the storage interfaces and the one
// error type every layer speaks. It imports no other package of this module.
package data

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Error codes: each maps to one HTTP status in server/errors.go (conventions §2).
const (
	EMALFORMED    = "malformed_json"
	EUNAUTHORIZED = "unauthenticated"
	EFORBIDDEN    = "forbidden"
	EQUOTA        = "quota_exceeded"
	ENOTFOUND     = "not_found"
	EMETHOD       = "method_not_allowed"
	ECONFLICT     = "conflict"
	EPRECONDITION = "precondition_failed"
	ETOOLARGE     = "payload_too_large"
	EMEDIATYPE    = "unsupported_media_type"
	EINVALID      = "validation_failed"
	ERATELIMITED  = "rate_limited"
	EINTERNAL     = "internal_error"
	EUNAVAILABLE  = "service_unavailable"
	// ESTORAGEFULL is a write refused because the data directory's filesystem is full
	// (ENOSPC); reads keep working and the write can be retried once space is freed.
	ESTORAGEFULL = "insufficient_storage"
	// EPROVIDER is a language model (or other outside) provider's failure: 502 naming the
	// provider, its status and message, never a credential (conventions §21).
	EPROVIDER = "provider_error"
	// EPROVIDERTIMEOUT is a provider that did not answer in time: 504.
	EPROVIDERTIMEOUT = "provider_timeout"
	// EMISSINGVARIABLES is an agent configuration using {{variables}} the request gives no
	// value for: 422 naming each one under variables.<name> (conventions §23).
	EMISSINGVARIABLES = "missing_variables"
)

// ErrStorageUnavailable is the cause a storage engine wraps a failure in when its
// database cannot be reached (restarting, refusing connections, a connection broken
// mid-request): the server answers 503 with Retry-After. A write that met it may or may
// not have committed; a retry with the same Idempotency-Key is answered either way.
var ErrStorageUnavailable = errors.New("the database is unavailable")

// ErrStorageSuperseded is the cause a storage engine refuses a write with once a newer
// voiceapi has migrated the database past this binary's schema (PostgreSQL replicas
// upgraded one by one): the server answers 503 and the replica is to be replaced. Nothing
// of the refused write was carried out.
var ErrStorageSuperseded = errors.New("the database was upgraded by a newer voiceapi")

// LoggedByStorage reports an error whose cause storage has logged once already (the
// fence's ErrStorageSuperseded): whatever logs its errors (a request, a background loop)
// leaves it out, or the line would repeat for as long as the replica runs.
func LoggedByStorage(err error) bool { return errors.Is(err, ErrStorageSuperseded) }

// Error is an application error: a code, a message safe to show to the client and, for
// validation failures, the messages per field keyed by dot path.
type Error struct {
	Code    string
	Message string
	Fields  map[string][]string

	order   []string // Fields' paths in the order found, when Invalid made the error
	omitted int      // faults found past MaxFaults, counted in Message, not in Fields
}

func (e *Error) Error() string { return fmt.Sprintf("%s: %s", e.Code, e.Message) }

// Errorf returns an *Error with the given code and formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Invalid returns a validation_failed error carrying fields, whose paths order lists in
// the order they were found: its message is the first fault, with a count of the others.
func Invalid(fields map[string][]string, order []string) *Error {
	return invalid(fields, order, 0)
}

// invalid is Invalid for faults of which omitted more were counted but not kept.
func invalid(fields map[string][]string, order []string, omitted int) *Error {
	first := fields[order[0]][0]
	total := omitted
	for _, msgs := range fields {
		total += len(msgs)
	}
	msg := first
	if total > 1 {
		msg = fmt.Sprintf("%s (and %s more error%s)", first, Thousands(total-1), plural(total-1))
	}
	return &Error{Code: EINVALID, Message: msg, Fields: fields, order: order, omitted: omitted}
}

// FieldPaths returns the field paths of e in the order they were found, sorted when e
// does not know it.
func (e *Error) FieldPaths() []string {
	if len(e.order) == len(e.Fields) {
		return e.order
	}
	return e.SortedFieldPaths()
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// FieldError returns a validation error about one field.
func FieldError(path, message string) *Error {
	return &Error{Code: EINVALID, Message: message, Fields: map[string][]string{path: {message}}}
}

// MissingVariables is the error for variables used but given nowhere, names sorted. The
// names come from a configuration whose texts may name tens of thousands of variables
// (a 100,000-character prompt of {{ab}}s), so they go through Faults like any fault list:
// the first MaxFaults are named, in the fields and in the message, the rest counted.
func MissingVariables(names []string) *Error {
	var f Faults
	for _, n := range names {
		if f.Full() {
			f.Omit(1)
			continue
		}
		f.Add("variables."+n, fmt.Sprintf("The variable %s is used by the agent's configuration but has no value: give it one in variables, or a default in the agent's prompt_config.default_variables.", n))
	}
	listed := strings.Join(names[:len(names)-f.Omitted()], ", ")
	if f.Omitted() > 0 {
		listed += " and " + Thousands(f.Omitted()) + " more"
	}
	msg := fmt.Sprintf("The agent's configuration uses variables with no value: %s. Give each a value in variables, or a default in the agent's prompt_config.default_variables.", listed)
	return &Error{Code: EMISSINGVARIABLES, Message: msg, Fields: f.fields, order: f.order, omitted: f.Omitted()}
}

// NotFound is the error for an unknown, foreign or hidden record: existence is never revealed.
func NotFound(what string) *Error { return Errorf(ENOTFOUND, "%s not found.", what) }

// ErrCredentialsRefused marks the refusal of a password checked against an account's
// hash (a login's, a password change's current_password): the login limit per client
// address counts these failures only, and no other outcome of the same requests.
var ErrCredentialsRefused = errors.New("credentials refused")

// CredentialsRefused returns e marked as a refusal of credentials: errors.As still finds
// e, and errors.Is finds ErrCredentialsRefused.
func CredentialsRefused(e *Error) error { return &refusal{e} }

// refusal is an *Error marked with ErrCredentialsRefused.
type refusal struct{ e *Error }

func (r *refusal) Error() string   { return r.e.Error() }
func (r *refusal) Unwrap() []error { return []error{r.e, ErrCredentialsRefused} }

// ErrorCode returns the code of an application error, or EINTERNAL for anything else.
func ErrorCode(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	if err == nil {
		return ""
	}
	return EINTERNAL
}

// ErrorMessage returns the client-safe message of an application error.
func ErrorMessage(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return "Internal error."
}

// SortedFieldPaths returns the field paths of e in a stable order (for messages and tests).
func (e *Error) SortedFieldPaths() []string {
	paths := make([]string, 0, len(e.Fields))
	for p := range e.Fields {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	return paths
}
