package console

import (
	"html/template"
	"maps"
	"net/http"
	"net/url"
)

// Paging (conventions §4, docs/dashboard.md "Shared patterns"). Every list page reads one
// page at the cursor in its own URL and links the newer and older pages through the
// "pages" template (layout.html). Each link is the page's own query with only that list's
// cursor swapped: filters, and the cursor of another list on the same page, carry across,
// and a reload or the browser's back button shows the same page.

// perPage is the console's page size for lists; the API pages, the console follows.
const perPage = "20"

// pageQuery asks for one page of size records, at cursor ("" for the first).
func pageQuery(size, cursor string) url.Values {
	q := url.Values{"per_page": {size}}
	if cursor != "" {
		q.Set("cursor", cursor)
	}
	return q
}

// pager links the pages beside the one shown: "?…" queries for the page's own path,
// empty when there is no such page.
type pager struct {
	Newer, Older template.URL
}

// pagerOf links the pages beside res, a page read for r with its cursor under key.
func pagerOf(r *http.Request, key string, res *reply) pager {
	return pager{Newer: cursorLink(r.URL.Query(), key, res.PrevCursor()), Older: cursorLink(r.URL.Query(), key, res.NextCursor())}
}

// cursorLink is the query in with key set to cursor; empty for no cursor.
func cursorLink(in url.Values, key, cursor string) template.URL {
	if cursor == "" {
		return ""
	}
	q := maps.Clone(in)
	if q == nil {
		q = url.Values{}
	}
	q.Set(key, cursor)
	// Encoded here: as a plain string, html/template would escape its = and & again.
	return template.URL("?" + q.Encode())
}

// filteredList reads one page of a list with the query parameters keys copied from the
// page's own URL, and from and to as whole days. A 422 (a bad filter) comes back as fail,
// for the page to show on its form; any other failure has been rendered, and ok is false.
func (h *Handler) filteredList(w http.ResponseWriter, r *http.Request, path string, keys ...string) (list []any, pages pager, fail *apiError, ok bool) {
	in := r.URL.Query()
	q := filterQuery(in, keys...)
	maps.Copy(q, pageQuery(perPage, in.Get("cursor")))
	res, err := h.call(r, "GET", path, q, nil)
	if err == nil {
		return res.List(), pagerOf(r, "cursor", res), nil, true
	}
	if fail = err.(*apiError); fail.Status != http.StatusUnprocessableEntity {
		h.fail(w, r, err)
		return nil, pager{}, nil, false
	}
	return nil, pager{}, fail, true
}
