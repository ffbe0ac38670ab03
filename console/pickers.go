package console

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// Pickers (docs/dashboard.md, "Shared patterns"): a select of the records the user may
// see, read from the API as the signed-in user, that reaches every one of them. It shows
// one page of 100, newest first; when the list has more, agents are found by name (the
// agents list's name=), numbers by nickname or number (the numbers list's q=), and the pages of choices are walked with Newer/More buttons (the
// list's cursors): a GET round-trip of the picker's own form, which carries every value
// typed in it. A record chosen before stays among the choices, named, whatever is shown.

// pickPage is how many records a picker shows at once: the API's largest page.
const pickPage = "100"

// Each picker's query parameters are named after the field it fills (or its key, where
// several forms of a page fill the same field), so that two pickers on one form (a
// number's inbound and outbound agents) keep each other's search.
const (
	findPrefix = "find_" // find_agent_id: the name searched for
	morePrefix = "more_" // more_agent_id: the cursor of the page of choices shown
)

// picking reports whether the request is a picker's round-trip (a Find, Newer or More
// button), for a form page to show what was typed rather than its defaults.
func picking(in url.Values) bool { return pickedKey(in) != "" }

// pickLabels name the list's parameters a picker sends in its own words.
var pickLabels = fieldLabels{"name": "The search", "q": "The search"}

// pickChoice is one option of a picker.
type pickChoice struct {
	ID, Name string
	Selected bool
}

// picker is one picker's choices and how to reach the others.
type picker struct {
	Field    string // the form field the choice is sent as
	Key      string // names its query parameters: the field, unless several forms fill it
	What     string // "agents", "numbers": the buttons' words
	Listed   bool   // the user may list the records; else the field takes an id
	Multiple bool
	Value    string // the chosen id, for the id field of a user who may not list
	Choices  []pickChoice
	// Findable: a search is offered (the list has more than one page, or a search was
	// made). Query is the text searched for; FindBy says what it reads ("name") and
	// FindRule names the bound of its field (textRule).
	Findable         bool
	Query            string
	FindBy, FindRule string
	// Newer and Older are the cursors of the pages of choices beside the one shown.
	Newer, Older string
	Err          string // the API's refusal of the search (a name past its bound)
	records      []any  // the page of records shown, for naming a list's rows
}

// Shown reports whether there is something to pick from or search: a user who may list
// the records but has none gets no picker.
func (p *picker) Shown() bool {
	return p.Listed && (len(p.Choices) > 0 || p.Findable || p.Err != "")
}

// FindParam and MoreParam are the picker's query parameters.
func (p *picker) FindParam() string { return findPrefix + p.Key }
func (p *picker) MoreParam() string { return morePrefix + p.Key }

// Status says what the choices are, for the line under the picker that the select and
// the search field are described by.
func (p *picker) Status() string {
	found := len(p.records)
	switch {
	case p.Err != "":
		return p.Err
	case p.Query != "" && found == 0 && p.Older != "":
		// The API looks at a bounded number of records a page (docs/agents.md, numbers.md).
		return "No " + p.What + " matching “" + p.Query + "” yet: More " + p.What + " looks further."
	case p.Query != "" && found == 0:
		return "No " + p.What + " match “" + p.Query + "”."
	case p.Query != "" && p.Older != "":
		return titled(p.What) + " matching “" + p.Query + "”; More " + p.What + " shows the next."
	case p.Query != "":
		return titled(p.What) + " matching “" + p.Query + "”."
	case p.Newer == "" && p.Older != "" && p.Findable:
		return "The newest " + pickPage + " " + p.What + ": find the others by " + p.FindBy + ", or show more."
	case p.Newer == "" && p.Older != "":
		return "The newest " + pickPage + " " + p.What + ": More " + p.What + " shows the next."
	case p.Older != "":
		return "Older " + p.What + "; More " + p.What + " shows the next."
	case p.Newer != "":
		return "The oldest " + p.What + "."
	}
	return ""
}

// titled is s with a capital first letter.
func titled(s string) string {
	return strings.ToUpper(s[:1]) + s[1:]
}

// agentPicker is the agents' picker for field, the ids in selected chosen: the matches
// of its name search, or one page of the agents the user may see.
func (h *Handler) agentPicker(r *http.Request, field string, selected ...string) *picker {
	return h.agentPickerKeyed(r, field, field, selected)
}

// agentPickerKeyed is agentPicker for one of several forms filling field, its query
// parameters named by key.
func (h *Handler) agentPickerKeyed(r *http.Request, field, key string, selected []string) *picker {
	query := pickQuery(r, key)
	p := &picker{Field: field, Key: key, What: "agents", Query: strings.TrimSpace(query), FindBy: "name", FindRule: "MaxAgentName"}
	q := pageQuery(pickPage, r.URL.Query().Get(p.MoreParam()))
	if p.Query != "" {
		q.Set("name", p.Query)
	}
	res, ok := h.pickPage(r, p, "/api/v1/agents", q)
	if !ok {
		p.Value = first(selected)
		return p
	}
	p.Findable = p.Query != "" || p.Older != "" || p.Newer != "" || p.Err != ""
	list := res.List()
	n := recordNames(list, "name")
	h.nameMissing(r, n, "/api/v1/agents/", "name", selected)
	p.fill(list, n, selected)
	return p
}

// pickQuery is the text searched for by the picker key: in the address of a Find, or in
// a refused form, which shows the matches it was sent with.
func pickQuery(r *http.Request, key string) string {
	query := r.URL.Query().Get(findPrefix + key)
	if query == "" && r.PostForm != nil {
		query = r.PostForm.Get(findPrefix + key)
	}
	return query
}

// agentPickerBeside is the agents' picker for a second field of base's form (a number's
// outbound agent beside its inbound one): base's read serves it when both show the
// first page, unsearched.
func (h *Handler) agentPickerBeside(r *http.Request, base *picker, field, selected string) *picker {
	in := r.URL.Query()
	if base.Query != "" || in.Get(base.MoreParam()) != "" || in.Get(findPrefix+field) != "" || in.Get(morePrefix+field) != "" ||
		(r.PostForm != nil && r.PostForm.Get(findPrefix+field) != "") {
		return h.agentPicker(r, field, selected)
	}
	n := recordNames(base.records, "name")
	h.nameMissing(r, n, "/api/v1/agents/", "name", []string{selected})
	c := base.copyFor(field, []string{selected}, n)
	c.Field = field
	return c
}

// numberPicker is the numbers' picker for field: the matches of its search (the numbers
// list's q=, a nickname or the digits of a number), or one page at a time. dialable
// keeps only the numbers the list's access lets the user dial from in a campaign
// (access.dial, the API's rule of a campaign's number_id).
func (h *Handler) numberPicker(r *http.Request, field string, dialable bool, selected ...string) *picker {
	p := &picker{Field: field, Key: field, What: "numbers", Query: strings.TrimSpace(pickQuery(r, field)),
		FindBy: "nickname or number", FindRule: "MaxNicknameLen"}
	q := pageQuery(pickPage, r.URL.Query().Get(p.MoreParam()))
	if p.Query != "" {
		q.Set("q", p.Query)
	}
	res, ok := h.pickPage(r, p, "/api/v1/numbers", q)
	if !ok {
		p.Value = first(selected)
		return p
	}
	p.Findable = p.Query != "" || p.Older != "" || p.Newer != "" || p.Err != ""
	access, _ := res.Body["access"].(map[string]any)
	var list []any
	for _, it := range res.List() {
		m, _ := it.(map[string]any)
		if a, _ := access[str(m["id"])].(map[string]any); !dialable || a["dial"] == true {
			list = append(list, it)
		}
	}
	n := numberNames(list)
	for _, id := range selected {
		if _, ok := n[id]; !ok && id != "" {
			if one, err := h.call(r, "GET", "/api/v1/numbers/"+url.PathEscape(id), nil, nil); err == nil {
				n[id] = numberLabel(one.Data())
			}
		}
	}
	p.fill(list, n, selected)
	return p
}

// memberPicker is the picker of the workspace's members for field (the audit log's
// actor), named with their emails, one page at a time (the members list has no search:
// More walks it).
func (h *Handler) memberPicker(r *http.Request, field, selected string) *picker {
	p := &picker{Field: field, Key: field, What: "members"}
	base := h.wsPath(r) + "/users"
	res, ok := h.pickPage(r, p, base, pageQuery(pickPage, r.URL.Query().Get(p.MoreParam())))
	if !ok {
		p.Value = selected
		return p
	}
	n := names{}
	label := func(m map[string]any) string { return str(m["name"]) + " <" + str(m["email"]) + ">" }
	for _, it := range res.List() {
		m, _ := it.(map[string]any)
		n[str(m["id"])] = label(m)
	}
	if _, known := n[selected]; !known && selected != "" {
		if one, err := h.call(r, "GET", base+"/"+url.PathEscape(selected), nil, nil); err == nil {
			n[selected] = label(one.Data())
		}
	}
	p.fill(res.List(), n, []string{selected})
	return p
}

// workspacePicker is the picker of the user's workspaces for field (the switch), the
// current one chosen, one page at a time (More walks the others).
func (h *Handler) workspacePicker(r *http.Request, field, current string) *picker {
	p := &picker{Field: field, Key: field, What: "workspaces"}
	res, ok := h.pickPage(r, p, "/api/v1/workspaces", pageQuery(pickPage, r.URL.Query().Get(p.MoreParam())))
	if !ok {
		p.Value = current
		return p
	}
	n := recordNames(res.List(), "name")
	h.nameMissing(r, n, "/api/v1/workspaces/", "name", []string{current})
	p.fill(res.List(), n, []string{current})
	return p
}

// versionPicker is the picker of one of an agent's versions for field ("a", "b" of the
// versions page's comparison), selected a version number: the page of versions first
// (the versions page's own read of the newest 100, when its list is on its first page
// and the picker too), More walking the others.
func (h *Handler) versionPicker(r *http.Request, agentID, field, selected string, first *reply) *picker {
	p := &picker{Field: field, Key: field, What: "versions"}
	res, ok := first, true
	if cursor := r.URL.Query().Get(p.MoreParam()); cursor != "" || res == nil {
		res, ok = h.pickPage(r, p, "/api/v1/agents/"+url.PathEscape(agentID)+"/versions", pageQuery(pickPage, cursor))
	} else {
		p.Listed, p.Newer, p.Older = true, res.PrevCursor(), res.NextCursor()
	}
	if !ok {
		p.Value = selected
		return p
	}
	var list []any
	n := names{}
	for _, it := range res.List() {
		v := str(it.(map[string]any)["version_number"])
		list, n[v] = append(list, map[string]any{"id": v}), "Version "+v
	}
	var chosen []string
	if selected != "" && selected != "current" { // "current" is the draft, the picker's empty choice
		chosen, n[selected] = []string{selected}, "Version "+selected
	}
	p.fill(list, n, chosen)
	return p
}

// pickedKey is the key of the picker whose Find, Newer or More button the request comes
// from, "" for none.
func pickedKey(in url.Values) string {
	for k := range in {
		for _, prefix := range []string{findPrefix, morePrefix} {
			if key, ok := strings.CutPrefix(k, prefix); ok {
				return key
			}
		}
	}
	return ""
}

// copyFor is p's page of choices for another form's picker (key), selected there, named
// by n: one read of the list serves every form of a page.
func (p *picker) copyFor(key string, selected []string, n names) *picker {
	c := *p
	c.Key, c.Choices, c.Query = key, nil, ""
	c.fill(p.records, n, selected)
	return &c
}

// pickPage reads one page of choices into p; false when the user may not list them
// (the picker then takes an id).
func (h *Handler) pickPage(r *http.Request, p *picker, path string, q url.Values) (*reply, bool) {
	res, err := h.call(r, "GET", path, q, nil)
	if err != nil {
		if e, ok := err.(*apiError); ok && e.Status == http.StatusUnprocessableEntity {
			// A search past its bound or a stale cursor: said under the picker, which
			// keeps the chosen records.
			p.Listed, p.Err = true, strings.Join(relabel(e, pickLabels).Messages(), " ")
			if _, stale := e.Errors["cursor"]; stale && p.FindBy != "" {
				p.Err = "These choices no longer follow from the search: press Find."
			} else if stale {
				p.Err = "This page of " + p.What + " is out of date: open the page again from the menu."
			}
			return &reply{}, true
		}
		return nil, p.listed(err)
	}
	p.Listed, p.Newer, p.Older = true, res.PrevCursor(), res.NextCursor()
	return res, true
}

// listed records whether the list could be read; a user without its module gets an id
// field instead of a picker, as before.
func (p *picker) listed(err error) bool {
	p.Listed = err == nil
	return p.Listed
}

// fill sets the choices: the ids selected that list lacks first, then list, named by n.
func (p *picker) fill(list []any, n names, selected []string) {
	p.records = list
	shown := map[string]bool{}
	for _, it := range list {
		m, _ := it.(map[string]any)
		shown[str(m["id"])] = true
	}
	for _, id := range selected {
		if id != "" && !shown[id] {
			shown[id] = true
			p.Choices = append(p.Choices, pickChoice{ID: id, Name: n.Of(id), Selected: true})
		}
	}
	for _, it := range list {
		id := str(it.(map[string]any)["id"])
		p.Choices = append(p.Choices, pickChoice{ID: id, Name: n.Of(id), Selected: slices.Contains(selected, id)})
	}
	p.Value = first(selected)
}

// first is the first of ids, or "".
func first(ids []string) string {
	if len(ids) == 0 {
		return ""
	}
	return ids[0]
}
