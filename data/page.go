package data

// PageRequest asks for one page of a cursor-paginated list (conventions §4).
type PageRequest struct {
	PerPage int
	Cursor  string
}

// Page is the meta object of a list response.
type Page struct {
	PerPage    int     `json:"per_page"`
	NextCursor *string `json:"next_cursor"`
	PrevCursor *string `json:"prev_cursor"`
}
