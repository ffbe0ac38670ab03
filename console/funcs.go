package console

import (
	"crypto/rand"
	"encoding/base64"
	"html/template"
	"net/url"
	"strings"

	"github.com/voiceapi/voiceapi/data"
)

// idempotencyField is the hidden field of a creating form that carries its
// Idempotency-Key (api.go, create).
const idempotencyField = "idempotency_key"

// templateFuncs are the functions every page template may call.
func (h *Handler) templateFuncs() template.FuncMap {
	return template.FuncMap{
		"asset": h.assets.URL,
		// Human formats (format.go, labels.go).
		"str": str, "count": count, "figure": figure, "when": when, "whenDay": whenDay, "duration": duration, "deliveryFault": deliveryFault,
		"label": label, "scopeLabel": scopeLabel, "json": toJSON, "clock": clock,
		"has":   has,
		"bound": formBound, "textRule": textRule,
		"query": queryString,
		"get":   lookup,
		// short abbreviates a hash for a table cell; the whole is in its title.
		"short": func(s string) string {
			if len(s) > 16 {
				return s[:16] + "…"
			}
			return s
		},
		// errs returns the messages of one field of a failed call.
		"errs": func(e *apiError, field string) []string {
			if e == nil {
				return nil
			}
			return e.Errors[field]
		},
		// errsIn returns the messages of a field that holds a whole JSON object (a
		// number's or a test's variables) and of every path under it: the API names a bad
		// variable by its own path ("variables.my var"), which no field of the form has.
		"errsIn": errsIn,
		"list":   func(xs ...string) []string { return xs },
		"strs":   strs,
		"dict": func(kv ...any) map[string]any {
			m := map[string]any{}
			for i := 0; i+1 < len(kv); i += 2 {
				m[kv[i].(string)] = kv[i+1]
			}
			return m
		},
		"join": func(v any) string {
			l, _ := v.([]any)
			parts := make([]string, len(l))
			for i, x := range l {
				parts[i] = str(x)
			}
			return strings.Join(parts, ", ")
		},
		// newKey is a fresh Idempotency-Key for a creating form.
		"newKey": func() string {
			var b [18]byte
			rand.Read(b[:])
			return base64.RawURLEncoding.EncodeToString(b[:])
		},
		"idemField":   func() string { return idempotencyField },
		"runFinished": data.TestRunFinished,
		"add":         func(a, b int) int { return a + b },
		"tally":       tally,
		// plural counts in words, "1 case", "3 cases", rather than "case(s)".
		"plural": func(v any, one, many string) string {
			switch n := v.(type) {
			case float64:
				return plural(n, one, many)
			case int:
				return plural(float64(n), one, many)
			}
			return str(v) + " " + many
		},
	}
}

// queryString builds "?k=v&…" from name, value pairs, leaving out empty values.
func queryString(kv ...string) template.URL {
	q := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			q.Set(kv[i], kv[i+1])
		}
	}
	return template.URL("?" + q.Encode())
}

// errsIn lists the messages of field and of every path under it, in path order: the
// faults a form shows beside one field that stands for a whole object or list.
func errsIn(e *apiError, field string) []string {
	if e == nil {
		return nil
	}
	return e.messagesWhere(func(p string) bool { return p == field || strings.HasPrefix(p, field+".") })
}
