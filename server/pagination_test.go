package server_test

import (
	"fmt"
	"net/url"
	"testing"
)

func cursor(r *response, which string) string {
	c, _ := r.Meta()[which].(string)
	return c
}

func TestPerPageBounds(t *testing.T) {
	e := newEnv(t)
	for i := 0; i < 20; i++ {
		expect(t, e.do("POST", "/api/v1/workspaces", e.Owner.Token, map[string]any{"name": fmt.Sprint("ws", i)}), 201)
	}
	for _, path := range []string{"/api/v1/workspaces", "/api/v1/api-keys", "/api/v1/users", "/api/v1/workspaces/" + e.Owner.WorkspaceID + "/users"} {
		for _, bad := range []string{"0", "101", "-1", "abc", "", "1.5", "1e2"} {
			expectFields(t, e.do("GET", path+"?per_page="+url.QueryEscape(bad), e.Owner.Token, nil), "per_page")
		}
		for _, ok := range []string{"1", "100"} {
			r := e.do("GET", path+"?per_page="+ok, e.Owner.Token, nil)
			expect(t, r, 200)
			if fmt.Sprint(r.Meta()["per_page"]) != ok {
				t.Errorf("%s per_page=%s: meta %v", path, ok, r.Meta())
			}
		}
	}
	r := e.do("GET", "/api/v1/workspaces", e.Owner.Token, nil)
	if len(r.List()) != 15 || r.Meta()["per_page"] != float64(15) {
		t.Errorf("default page: %d items, meta %v", len(r.List()), r.Meta())
	}
	if len(e.do("GET", "/api/v1/workspaces?per_page=1", e.Owner.Token, nil).List()) != 1 {
		t.Error("per_page=1")
	}
	if len(e.do("GET", "/api/v1/workspaces?per_page=100", e.Owner.Token, nil).List()) != 21 {
		t.Error("per_page=100")
	}
}

func TestCursorRoundTripAndWalk(t *testing.T) {
	e := newEnv(t)
	var created []string // oldest first
	created = append(created, e.Owner.WorkspaceID)
	for i := 0; i < 10; i++ {
		r := e.do("POST", "/api/v1/workspaces", e.Owner.Token, map[string]any{"name": fmt.Sprint("ws", i)})
		created = append(created, r.Data()["id"].(string))
	}
	list := func(c string) *response {
		r := e.do("GET", "/api/v1/workspaces?per_page=3&cursor="+url.QueryEscape(c), e.Owner.Token, nil)
		expect(t, r, 200)
		return r
	}
	p1 := list("")
	if cursor(p1, "prev_cursor") != "" || cursor(p1, "next_cursor") == "" {
		t.Fatalf("first page meta %v", p1.Meta())
	}
	p2 := list(cursor(p1, "next_cursor"))
	back := list(cursor(p2, "prev_cursor"))
	if fmt.Sprint(pageIDs(back)) != fmt.Sprint(pageIDs(p1)) {
		t.Errorf("next then prev: %v, want %v", pageIDs(back), pageIDs(p1))
	}
	if cursor(back, "prev_cursor") != "" {
		t.Errorf("back on the first page, prev_cursor = %q", cursor(back, "prev_cursor"))
	}
	p3 := list(cursor(p2, "next_cursor"))
	if fmt.Sprint(pageIDs(list(cursor(p3, "prev_cursor")))) != fmt.Sprint(pageIDs(p2)) {
		t.Error("p3 prev is not p2")
	}

	// A full walk, inserting a record before every page: nothing skipped or repeated.
	var walked []string
	c := ""
	for page := 0; ; page++ {
		r := list(c)
		walked = append(walked, pageIDs(r)...)
		expect(t, e.do("POST", "/api/v1/workspaces", e.Owner.Token, map[string]any{"name": fmt.Sprint("during", page)}), 201)
		c = cursor(r, "next_cursor")
		if c == "" {
			break
		}
	}
	if len(walked) != len(created) {
		t.Fatalf("walked %d records, want %d: %v", len(walked), len(created), walked)
	}
	for i, id := range walked {
		if id != created[len(created)-1-i] {
			t.Fatalf("walk position %d: %s, want %s", i, id, created[len(created)-1-i])
		}
	}
	// Walking back with prev_cursor from the last page reaches the newest records.
	last := list(cursor(list(cursor(list(cursor(p1, "next_cursor")), "next_cursor")), "next_cursor"))
	if cursor(last, "next_cursor") != "" {
		t.Errorf("last page has next_cursor: %v", last.Meta())
	}
}

func TestBadCursors(t *testing.T) {
	e := newEnv(t)
	other := e.newUser("pat@example.com", false)
	for i := 0; i < 4; i++ {
		e.do("POST", "/api/v1/workspaces", e.Owner.Token, map[string]any{"name": "w"})
		e.do("POST", "/api/v1/workspaces", other.Token, map[string]any{"name": "w"})
		e.do("POST", "/api/v1/api-keys", e.Owner.Token, map[string]any{"name": "k"})
	}
	wsCursor := cursor(e.do("GET", "/api/v1/workspaces?per_page=1", e.Owner.Token, nil), "next_cursor")
	otherCursor := cursor(e.do("GET", "/api/v1/workspaces?per_page=1", other.Token, nil), "next_cursor")
	if wsCursor == "" || otherCursor == "" {
		t.Fatal("no cursors")
	}
	tampered := []byte(wsCursor)
	tampered[3] ^= 1
	for name, c := range map[string]string{
		"garbage":        "!!!",
		"not base64url":  "abc+/=",
		"short":          "bg",
		"tampered":       string(tampered),
		"another user's": otherCursor,
	} {
		t.Run(name, func(t *testing.T) {
			expectFields(t, e.do("GET", "/api/v1/workspaces?cursor="+url.QueryEscape(c), e.Owner.Token, nil), "cursor")
		})
	}
	expectFields(t, e.do("GET", "/api/v1/api-keys?cursor="+url.QueryEscape(wsCursor), e.Owner.Token, nil), "cursor")
	expectFields(t, e.do("GET", "/api/v1/users?cursor="+url.QueryEscape(wsCursor), e.Owner.Token, nil), "cursor")
	expectFields(t, e.do("GET", "/api/v1/workspaces/"+e.Owner.WorkspaceID+"/users?cursor="+url.QueryEscape(wsCursor), e.Owner.Token, nil), "cursor")
	// Both faults at once.
	expectFields(t, e.do("GET", "/api/v1/workspaces?per_page=0&cursor=zz", e.Owner.Token, nil), "per_page")
}

func TestEmptyAndExhaustedPages(t *testing.T) {
	e := newEnv(t)
	r := e.do("GET", "/api/v1/workspaces/"+e.Owner.WorkspaceID+"/users", e.Owner.Token, nil)
	expect(t, r, 200)
	if len(r.List()) != 1 || r.Meta()["next_cursor"] != nil || r.Meta()["prev_cursor"] != nil {
		t.Errorf("single page %s", r.Body)
	}
	// A user with no API keys beyond the one in use... list a fresh user's keys after deleting all.
	u := e.newUser("quinn@example.com", false)
	l := e.do("GET", "/api/v1/api-keys", u.Token, nil)
	if string(mustJSON(l.JSON()["data"])) == "null" {
		t.Errorf("data is null: %s", l.Body)
	}
	// Records deleted under a cursor: the next page is empty, with a way back.
	var wsIDs []string
	for i := 0; i < 4; i++ {
		wsIDs = append(wsIDs, e.do("POST", "/api/v1/workspaces", u.Token, map[string]any{"name": "w"}).Data()["id"].(string))
	}
	p1 := e.do("GET", "/api/v1/workspaces?per_page=2", u.Token, nil)
	next := cursor(p1, "next_cursor")
	for _, id := range []string{wsIDs[0], wsIDs[1]} {
		expect(t, e.do("DELETE", "/api/v1/workspaces/"+id, u.Token, nil), 204)
	}
	// Remaining: wsIDs[3], wsIDs[2] (page 1) and the personal workspace.
	p2 := e.do("GET", "/api/v1/workspaces?per_page=2&cursor="+url.QueryEscape(next), u.Token, nil)
	expect(t, p2, 200)
	if got := pageIDs(p2); len(got) != 1 || got[0] != u.WorkspaceID {
		t.Errorf("page 2 %v", got)
	}
	if cursor(p2, "next_cursor") != "" || cursor(p2, "prev_cursor") == "" {
		t.Errorf("page 2 meta %v", p2.Meta())
	}
	back := e.do("GET", "/api/v1/workspaces?per_page=2&cursor="+url.QueryEscape(cursor(p2, "prev_cursor")), u.Token, nil)
	if fmt.Sprint(pageIDs(back)) != fmt.Sprint([]string{wsIDs[3], wsIDs[2]}) {
		t.Errorf("back %v", pageIDs(back))
	}
}
