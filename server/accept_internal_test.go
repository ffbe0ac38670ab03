package server

import (
	"mime"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

func acceptRequest(accept string) *http.Request {
	r, _ := http.NewRequest("POST", "/", nil)
	if accept != "" {
		r.Header.Set("Accept", accept)
	}
	return r
}

// TestAcceptsEventStream: the stream is asked for by name with a quality above 0, in any
// element of the list (FuzzAcceptsEventStream found q=0 read as a request for it, and a
// quoted comma ending an element).
func TestAcceptsEventStream(t *testing.T) {
	cases := []struct {
		accept string
		want   bool
	}{
		{"", false},
		{"text/event-stream", true},
		{"Text/Event-Stream", true},
		{"application/json, text/event-stream", true},
		{"text/event-stream;q=0.001", true},
		{"text/event-stream; q=1", true},
		{"text/event-stream;q=0", false},
		{"text/event-stream;q=0.000, application/json", false},
		{"text/event-stream;q=1.001", false},
		{"text/event-stream;q=abc", false},
		{`text/event-stream;note="a,b"`, true},
		{`application/json;note="a,text/event-stream"`, false},
		{`application/json;note="a\",b", text/event-stream`, true},
		{"text/*", false},
		{"*/*", false},
		{"text/event-streams", false},
	}
	for _, c := range cases {
		if got := acceptsEventStream(acceptRequest(c.accept)); got != c.want {
			t.Errorf("Accept %q: stream %v, want %v", c.accept, got, c.want)
		}
	}
}

// FuzzAcceptsEventStream: any Accept header is read without a panic; a list of media
// ranges that do not name the stream (other) asks for it once an element naming it with a
// quality q is added, before or after, exactly when q is above 0 and at most 1, and
// whatever parameters (params, valid ones) the element carries.
func FuzzAcceptsEventStream(f *testing.F) {
	f.Add("application/json", `; charset=utf-8`, "0")
	f.Add("", "", "1")
	f.Add(`application/json;note="a,b"`, `;note="x,y"`, "0.5")
	f.Add("text/*;q=0.2, */*;q=0.1", "", "0.000")
	f.Add(`a/b;x="\"", c/d`, "; level=1", "1.0")
	f.Fuzz(func(t *testing.T, other, params, q string) {
		acceptsEventStream(acceptRequest(other)) // any header: no panic
		if strings.ContainsAny(other+params+q, "\r\n") || !plainList(other) {
			return
		}
		element := "text/event-stream" + params
		if mt, p, err := mime.ParseMediaType(element); err != nil || mt != "text/event-stream" || p["q"] != "" {
			return
		}
		if _, _, err := mime.ParseMediaType(element + ";q=1"); err != nil {
			return // a parameter list that takes no further one (a trailing ";")
		}
		qv, err := strconv.ParseFloat(q, 64)
		want := err == nil && qv > 0 && qv <= 1
		if strings.ContainsAny(q, `",;=`) || strings.ContainsFunc(q, unicode.IsSpace) {
			// Not a token: the element would not say q=q. (mime.ParseMediaType skips any
			// white space before a value, a vertical tab too, so "q=\v.1" is read as q=.1.)
			return
		}
		for _, accept := range []string{other + ", " + element + ";q=" + q, element + ";q=" + q + ", " + other} {
			if got := acceptsEventStream(acceptRequest(accept)); got != want {
				t.Fatalf("Accept %q: stream %v, want %v", accept, got, want)
			}
		}
		if !acceptsEventStream(acceptRequest(other + "," + element)) {
			t.Fatalf("Accept %q: no stream", other+","+element)
		}
	})
}

// plainList reports whether h is a list of well-formed media ranges none of which is
// text/event-stream (so that what the fuzz target adds decides).
func plainList(h string) bool {
	if strings.Count(h, `"`)%2 != 0 || strings.Contains(h, `\`) {
		return false // an open quote would swallow what follows
	}
	for _, part := range headerElements(h) {
		if part == "" {
			continue
		}
		mt, _, err := mime.ParseMediaType(part)
		if err != nil || mt == "text/event-stream" {
			return false
		}
	}
	return true
}
