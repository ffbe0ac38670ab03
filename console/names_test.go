package console

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestNameMissingAsksOncePerID: a page of rows naming the same record the user cannot
// open (a former member who started every run) costs one request for it, not one a row;
// a record found is named in every row.
func TestNameMissingAsksOncePerID(t *testing.T) {
	asked := map[string]int{}
	h := New(Options{API: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked[r.URL.Path]++
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/api/v1/users/usr_ada" {
			w.Write([]byte(`{"data": {"name": "Ada"}}`))
			return
		}
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte(`{"message": "Not found.", "code": "not_found"}`))
	})})
	out := names{}
	ids := []string{"usr_gone", "usr_ada", "usr_gone", "usr_gone", "usr_ada", ""}
	h.nameMissing(httptest.NewRequest("GET", "/agents/agt_1/tests", nil), out, "/api/v1/users/", "name", ids)
	if asked["/api/v1/users/usr_gone"] != 1 || asked["/api/v1/users/usr_ada"] != 1 || len(asked) != 2 {
		t.Errorf("requests: %v, want one for each id", asked)
	}
	if out.Of("usr_ada") != "Ada" || out.Has("usr_gone") {
		t.Errorf("names: %v", out)
	}
}
