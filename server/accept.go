package server

import (
	"mime"
	"net/http"
	"strconv"
	"strings"
)

// acceptsEventStream reports whether the request asks for text/event-stream: its Accept
// names the type (not a wildcard: a stream is asked for explicitly) with a quality above
// 0. q=0 means "not acceptable" (RFC 9110, 12.4.2), and a comma inside a quoted parameter
// does not end the element.
func acceptsEventStream(r *http.Request) bool {
	for _, part := range headerElements(r.Header.Get("Accept")) {
		mt, params, err := mime.ParseMediaType(part)
		if err == nil && mt == "text/event-stream" && acceptable(params["q"]) {
			return true
		}
	}
	return false
}

// acceptable reports whether a q parameter (absent: 1) is a quality above 0 and at most 1.
func acceptable(q string) bool {
	if q == "" {
		return true
	}
	v, err := strconv.ParseFloat(q, 64)
	return err == nil && v > 0 && v <= 1
}

// headerElements splits a comma-separated header into its trimmed elements, keeping
// commas inside quoted strings (with their backslash escapes) within their element.
func headerElements(h string) []string {
	var out []string
	start, quoted, escaped := 0, false, false
	for i := 0; i < len(h); i++ {
		switch c := h[i]; {
		case escaped:
			escaped = false
		case quoted && c == '\\':
			escaped = true
		case c == '"':
			quoted = !quoted
		case c == ',' && !quoted:
			out = append(out, strings.TrimSpace(h[start:i]))
			start = i + 1
		}
	}
	return append(out, strings.TrimSpace(h[start:]))
}
