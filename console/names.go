package console

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/voiceapi/voiceapi/data"
)

// names maps record ids to what people call them (docs/dashboard.md, "Shared patterns":
// names instead of ids). Pages look the names up through the API as the signed-in user,
// so a name the user may not see is not shown: the id stands in for it.
type names map[string]string

// Of returns the name of id, or a short form of the id when it has none here ("—" for
// none at all).
func (n names) Of(id any) string {
	s := str(id)
	if s == "" {
		return "—"
	}
	if name, ok := n[s]; ok {
		return name
	}
	if s == data.NoAgent { // agent_ids left with no agent (the caller may see)
		return "No agent"
	}
	if s == data.HiddenAgent { // a number bound to an agent outside the caller's agent_ids
		return "An agent outside your access"
	}
	return shortID(s)
}

// Has reports whether id has a name here (a record the user may open).
func (n names) Has(id any) bool {
	_, ok := n[str(id)]
	return ok
}

// shortID keeps an id's prefix and its last characters: enough to tell two apart.
func shortID(id string) string {
	prefix, rest, ok := strings.Cut(id, "_")
	if !ok || len(rest) <= 8 {
		return id
	}
	return prefix + "_…" + rest[len(rest)-6:]
}

// recordNames maps the "id" of each record to its field key.
func recordNames(list []any, key string) names {
	out := names{}
	for _, it := range list {
		m, _ := it.(map[string]any)
		if id := str(m["id"]); id != "" {
			out[id] = str(m[key])
		}
	}
	return out
}

// agentNames names the agents in choices (a picker's page of them) and, for the ids the
// page shows that are not among them, asks for each one.
func (h *Handler) agentNames(r *http.Request, choices []any, ids ...string) names {
	out := recordNames(choices, "name")
	h.nameMissing(r, out, "/api/v1/agents/", "name", ids)
	return out
}

// nameMissing fills in the names of ids not in out, one request each: used for the few
// ids of one page of a list. An id asked for in vain (a record gone, or hidden from the
// user) is asked for once, however many rows name it.
func (h *Handler) nameMissing(r *http.Request, out names, base, key string, ids []string) {
	asked := map[string]bool{}
	for _, id := range ids {
		if _, ok := out[id]; ok || id == "" || asked[id] || id == data.HiddenAgent {
			continue
		}
		asked[id] = true
		if res, err := h.call(r, "GET", base+url.PathEscape(id), nil, nil); err == nil {
			out[id] = str(res.Data()[key])
		}
	}
}

// numberLabel names a number record: its nickname and phone number.
func numberLabel(n map[string]any) string {
	if nick := str(n["nickname"]); nick != "" {
		return nick + " (" + str(n["phone_number"]) + ")"
	}
	return str(n["phone_number"])
}

// numberNames names the numbers in choices by numberLabel.
func numberNames(choices []any) names {
	out := names{}
	for _, it := range choices {
		m, _ := it.(map[string]any)
		out[str(m["id"])] = numberLabel(m)
	}
	return out
}

// listIDs collects the key of each record of list, for names to look up.
func listIDs(list []any, keys ...string) []string {
	var out []string
	for _, it := range list {
		m, _ := it.(map[string]any)
		for _, k := range keys {
			if id := str(m[k]); id != "" {
				out = append(out, id)
			}
		}
	}
	return out
}
