package data

// PageRequest asks for one page of a list (conventions §4).
type PageRequest struct {
	PerPage int
	Cursor  string
}

// Page is the pagination meta of a list response.
type Page struct {
	PerPage    int     `json:"per_page"`
	NextCursor *string `json:"next_cursor"`
	PrevCursor *string `json:"prev_cursor"`
}

// MaxPerPage bounds per_page (spec: 1 to 100).
const MaxPerPage = 100

// DefaultPerPage is the page size when per_page is not given (conventions §4), on every
// engine and for a page the service answers without reading one.
const DefaultPerPage = 15
