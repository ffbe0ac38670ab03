package openapi

import (
	"net/http"
	"slices"

	"github.com/voiceapi/voiceapi/data"
)

// The shared parts of the OpenAPI document: the error shape and its responses, the
// headers and the header and pagination parameters.

// errorResponseName names the component response of each error status.
var errorResponseName = map[int]string{
	http.StatusBadRequest:            "MalformedJSON",
	http.StatusUnauthorized:          "Unauthenticated",
	http.StatusForbidden:             "Forbidden",
	http.StatusNotFound:              "NotFound",
	http.StatusConflict:              "Conflict",
	http.StatusPreconditionFailed:    "PreconditionFailed",
	http.StatusRequestEntityTooLarge: "PayloadTooLarge",
	http.StatusUnsupportedMediaType:  "UnsupportedMediaType",
	http.StatusUnprocessableEntity:   "ValidationFailed",
	http.StatusTooManyRequests:       "RateLimited",
	http.StatusInternalServerError:   "InternalError",
	http.StatusServiceUnavailable:    "ServiceUnavailable",
	http.StatusInsufficientStorage:   "InsufficientStorage",
	http.StatusBadGateway:            "ProviderError",
	http.StatusGatewayTimeout:        "ProviderTimeout",
}

// errorDescriptions say when each status happens (conventions §2).
var errorDescriptions = map[int]string{
	http.StatusBadRequest:            "malformed_json: the body is not parseable JSON, or not an object; or an action that takes no body was sent one other than {}.",
	http.StatusUnauthorized:          "unauthenticated: the token is missing, malformed, unknown, revoked or expired.",
	http.StatusForbidden:             "forbidden: the role or module does not allow the operation; or quota_exceeded: the subscription's limit is reached.",
	http.StatusNotFound:              "not_found: unknown id, or a record the caller may not see; existence is never revealed.",
	http.StatusConflict:              "conflict: a duplicate, a forbidden state change, or an Idempotency-Key whose first request is still running.",
	http.StatusPreconditionFailed:    "precondition_failed: If-Match names a version of the record that is no longer current.",
	http.StatusRequestEntityTooLarge: "payload_too_large: the body is over its limit (1 MiB for JSON by default).",
	http.StatusUnsupportedMediaType:  "unsupported_media_type: a body sent without Content-Type: application/json.",
	http.StatusUnprocessableEntity:   "validation_failed: every failing field is named in errors, by dot path; so is a member name given twice in one object (I-JSON, RFC 7493).",
	http.StatusTooManyRequests:       "rate_limited: too many requests; retry after Retry-After seconds.",
	http.StatusInternalServerError:   "internal_error: a bug; the message quotes the request id.",
	http.StatusServiceUnavailable:    "service_unavailable: the server is starting (opening its database), the database does not answer (restarting or unreachable), or, for a write, this replica is older than its database (a newer voiceapi migrated it; nothing was written); retry after Retry-After seconds. A write that met an unreachable database may have been carried out: retry a create with the same Idempotency-Key.",
	http.StatusInsufficientStorage:   "insufficient_storage: the data directory's filesystem is full; nothing was written, reads keep working. Retry once space is freed.",
	http.StatusBadGateway:            "provider_error: the language model provider failed (it is named, with its status and message; never a credential).",
	http.StatusGatewayTimeout:        "provider_timeout: the language model provider did not answer in time.",
}

// errorSchema is the one shape of every failure, with the codes of statusOf.
func errorSchema(statusOf map[string]int) map[string]any {
	codes := make([]string, 0, len(statusOf))
	for code := range statusOf {
		codes = append(codes, code)
	}
	slices.Sort(codes)
	return map[string]any{
		"type":        "object",
		"description": "The shape of every failure (conventions §2).",
		"required":    []string{"message", "code"},
		"properties": map[string]any{
			"message": map[string]any{"type": "string", "description": "What went wrong, for people."},
			"code":    map[string]any{"type": "string", "enum": codes, "description": "What went wrong, for programs."},
			"errors": map[string]any{
				"type":                 "object",
				"description":          "On 422 only: the messages for each failing field, keyed by dot path (llm_config.tools.2.name).",
				"additionalProperties": map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
			},
		},
	}
}

// errorResponses are the component responses, one per error status.
func errorResponses() map[string]any {
	out := map[string]any{}
	for status, name := range errorResponseName {
		headers := map[string]any{"X-Request-Id": headerRef("X-Request-Id")}
		switch status {
		case http.StatusUnauthorized:
			headers["WWW-Authenticate"] = headerRef("WWW-Authenticate")
		case http.StatusTooManyRequests, http.StatusServiceUnavailable:
			headers["Retry-After"] = headerRef("Retry-After")
		}
		out[name] = map[string]any{
			"description": errorDescriptions[status],
			"headers":     headers,
			"content": map[string]any{"application/json": map[string]any{
				"schema": map[string]any{"$ref": "#/components/schemas/Error"},
			}},
		}
	}
	return out
}

func headerRef(name string) map[string]any {
	return map[string]any{"$ref": "#/components/headers/" + name}
}

func header(desc, typ string) map[string]any {
	return map[string]any{"description": desc, "schema": map[string]any{"type": typ}}
}

var commonHeaders = map[string]any{
	"X-Request-Id":          header("The request's id; the caller's own when it sent a short, plain one.", "string"),
	"ETag":                  header("Strong entity tag of the record; send it back in If-Match.", "string"),
	"X-RateLimit-Limit":     header("Requests a minute allowed for this token.", "integer"),
	"X-RateLimit-Remaining": header("Requests left in the current window.", "integer"),
	"X-RateLimit-Reset":     header("Seconds until the window resets.", "integer"),
	"Retry-After":           header("Seconds to wait before retrying.", "integer"),
	"WWW-Authenticate":      header(`Bearer realm="voiceapi".`, "string"),
}

var commonParameters = map[string]any{
	"PerPage": map[string]any{"name": "per_page", "in": "query", "description": "Page size.",
		"schema": map[string]any{"type": "integer", "minimum": 1, "maximum": data.MaxPerPage, "default": 15}},
	"Cursor": map[string]any{"name": "cursor", "in": "query",
		"description": "Opaque cursor from meta.next_cursor or meta.prev_cursor of an earlier page.",
		"schema":      map[string]any{"type": "string"}},
	"IfMatch": map[string]any{"name": "If-Match", "in": "header",
		"description": "The ETag of the record as last seen: 412 when it has changed since. Without it the request proceeds.",
		"schema":      map[string]any{"type": "string"}},
	"IdempotencyKey": map[string]any{"name": "Idempotency-Key", "in": "header",
		"description": "Replays the first successful response to the same key and body for 24 hours; another body with the key is 422; a key still in progress is 409. Scoped per token.",
		"schema":      map[string]any{"type": "string", "maxLength": data.MaxIdempotencyKey}},
}
