package strictjson

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
)

func TestDuplicateMember(t *testing.T) {
	for _, c := range []struct {
		body, path string // path "" means no duplicate
	}{
		{`{}`, ""},
		{`{"name":"a"}`, ""},
		{`{"name":"a","Name":"b"}`, ""}, // names are case-sensitive
		{`{"name":"a","name":"b"}`, "name"},
		{` { "name" : 1 , "x" : 2 , "name" : 3 } `, "name"},
		{`{"name":"a","name":"a"}`, "name"}, // the same value twice is still refused
		{`{"a\u0062":1,"ab":2}`, "ab"},      // compared after unquoting
		{`{"a":{"b":1},"c":{"b":2}}`, ""},   // the same name in sibling objects
		{`{"a":[{"b":1},{"b":2}]}`, ""},     // and in sibling items
		{`{"a":{"b":1,"b":2}}`, "a.b"},
		{`{"llm_config":{"tools":[{"name":"x","type":"end_call"},{"name":"x","name":"y"}]}}`, "llm_config.tools.1.name"},
		{`{"a":[[1,2],[{"k":1,"k":2}]]}`, "a.1.0.k"},
		{`{"a":"{\"b\":1,\"b\":2}"}`, ""}, // a string holding JSON is only a string
		{`{"a":"x\"","a":1}`, "a"},
		{`{"a":{"x":{}},"b":1,"a":2}`, "a"}, // after a nested object closes
		{`{"k":1,"k\"":2}`, ""},
		{`[{"a":1,"a":2}]`, "0.a"},
		{`{"":1,"":2}`, ""},
	} {
		path, _, ok := duplicateMember([]byte(c.body))
		want := c.path != "" || c.body == `{"":1,"":2}`
		if ok != want || path != c.path {
			t.Errorf("%s: got %q %v, want %q %v", c.body, path, ok, c.path, want)
		}
	}
}

// TestDuplicateMemberManyNames passes the linear search's bound, where names go to a set.
func TestDuplicateMemberManyNames(t *testing.T) {
	for _, n := range []int{dupLinear - 1, dupLinear, dupLinear + 1, 200} {
		var b strings.Builder
		b.WriteString(`{`)
		for i := range n {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(`"k` + string(rune('a'+i%26)) + strings.Repeat("x", i/26) + `":1`)
		}
		clean := b.String() + `}`
		if p, _, ok := duplicateMember([]byte(clean)); ok {
			t.Fatalf("%d names: false duplicate %q", n, p)
		}
		for _, dup := range []string{`"ka"`, `"k` + string(rune('a'+(n-1)%26)) + strings.Repeat("x", (n-1)/26) + `"`} {
			body := b.String() + `,` + dup + `:2}`
			if p, _, ok := duplicateMember([]byte(body)); !ok || p != strings.Trim(dup, `"`) {
				t.Errorf("%d names, %s again: got %q %v", n, dup, p, ok)
			}
		}
	}
}

func TestObjectRefusesDuplicates(t *testing.T) {
	_, err := Object([]byte(`{"name":"a","name":"b"}`))
	e, ok := err.(*data.Error)
	if !ok || e.Code != data.EINVALID || len(e.Fields["name"]) != 1 {
		t.Fatalf("got %v", err)
	}
	// Decode names the duplicate with every other fault of the body.
	var v decInner
	err = Decode([]byte(`{"name":"a","x":1,"name":"b"}`), &v)
	e, ok = err.(*data.Error)
	if !ok || e.Code != data.EINVALID || e.Fields["name"] == nil || e.Fields["x"] == nil {
		t.Fatalf("got %v", err)
	}
	// Malformed JSON stays a 400, whatever names it repeats.
	if _, err := Object([]byte(`{"a":1,"a":2`)); data.ErrorCode(err) != data.EMALFORMED {
		t.Fatalf("truncated body: %v", err)
	}
}

// refDuplicate is duplicateMember written plainly on encoding/json's tokenizer.
func refDuplicate(b []byte) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(b))
	var w refWalker
	for {
		tok, err := dec.Token()
		if err != nil {
			return "", false
		}
		if isKey, dup := w.member(tok); isKey {
			if dup {
				return w.path(), true
			}
			continue
		}
		if handled, ended := w.delim(tok); ended {
			return "", false
		} else if handled {
			continue
		}
		w.value()
	}
}

// refFrame is one open object or array of refWalker.
type refFrame struct {
	object bool
	key    string
	index  int
	seen   map[string]bool
	atKey  bool
	first  bool
}

// refWalker follows the tokens' nesting for refDuplicate.
type refWalker struct{ stack []*refFrame }

// path is the dot path of the member or item read last.
func (w *refWalker) path() string {
	var p string
	for i, f := range w.stack {
		if i > 0 {
			p += "."
		}
		if f.object {
			p += f.key
		} else {
			p += strconv.Itoa(f.index)
		}
	}
	return p
}

// value marks that a value was read in the top frame.
func (w *refWalker) value() {
	if n := len(w.stack); n > 0 {
		f := w.stack[n-1]
		if f.object {
			f.atKey = true
		} else if f.first {
			f.first = false
		} else {
			f.index++
		}
	}
}

// member takes tok as the top object's next member name when one is due, reporting
// whether it did and whether the name was seen before in that object.
func (w *refWalker) member(tok json.Token) (isKey, dup bool) {
	n := len(w.stack)
	if n == 0 || !w.stack[n-1].object || !w.stack[n-1].atKey {
		return false, false
	}
	s, ok := tok.(string)
	if !ok {
		return false, false
	}
	f := w.stack[n-1]
	f.atKey = false
	f.key = s
	if f.seen[s] {
		return true, true
	}
	f.seen[s] = true
	return true, false
}

// delim opens or closes a frame for a delimiter, reporting whether tok was one and
// whether it closed the outermost value.
func (w *refWalker) delim(tok json.Token) (handled, ended bool) {
	switch tok {
	case json.Delim('{'):
		if n := len(w.stack); n > 0 && !w.stack[n-1].object {
			w.value()
		}
		w.stack = append(w.stack, &refFrame{object: true, seen: map[string]bool{}, atKey: true})
		return true, false
	case json.Delim('['):
		if n := len(w.stack); n > 0 && !w.stack[n-1].object {
			w.value()
		}
		w.stack = append(w.stack, &refFrame{first: true})
		return true, false
	case json.Delim('}'), json.Delim(']'):
		w.stack = w.stack[:len(w.stack)-1]
		if len(w.stack) == 0 {
			return true, true
		}
		if w.stack[len(w.stack)-1].object {
			w.stack[len(w.stack)-1].atKey = true
		}
		return true, false
	}
	return false, false
}

func FuzzDuplicateMember(f *testing.F) {
	for _, s := range []string{`{"a":1,"a":2}`, `{"a":[{"b":1},{"b":1,"b":2}]}`, `{"a\u0061":1,"aa":2}`, `[[],[{"x":{"y":1,"y":2}}]]`, `{"a":"\"","b":{}}`, `{"a":"\u0000","a":1}`, `{"a":1,"a":"\u0000"}`, `{"\\u0000":[]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) {
			duplicateMember(b) // must not panic, whatever it is given
			return
		}
		gotPath, nul, got := duplicateMember(b)
		if nul {
			// A text holding U+0000 came before any duplicated name.
			if !holdsNUL(b) {
				t.Fatalf("%q: reported U+0000 at %q, but no string holds it", b, gotPath)
			}
			return
		}
		if !got && holdsNUL(b) {
			t.Fatalf("%q: a string holds U+0000, not reported", b)
		}
		wantPath, want := refDuplicate(b)
		if got != want || gotPath != wantPath {
			t.Fatalf("%q: got %q %v, reference %q %v", b, gotPath, got, wantPath, want)
		}
	})
}

// holdsNUL reports whether a name or a string value of the valid JSON text b holds
// U+0000, as encoding/json reads it.
func holdsNUL(b []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(b))
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		if s, ok := tok.(string); ok && strings.IndexByte(s, 0) >= 0 {
			return true
		}
	}
}

// BenchmarkDuplicateMember is the cost, alone, of looking for a duplicated name in a
// 20-tool agent body (BenchmarkObjectAgentBody includes it).
func BenchmarkDuplicateMember(b *testing.B) {
	tools := make([]string, 20)
	for i := range tools {
		tools[i] = `{"name":"t` + strconv.Itoa(i) + `","type":"custom_function","description":"Tool","http_method":"POST","api_endpoint":"https://api.example.com/orders","timeout":5000,"custom_function_headers":["Authorization: Bearer token"],"speak_during_execution":true,"speak_during_execution_options":["One moment while I check."]}`
	}
	body := []byte(`{"name":"Support line","llm_config":{"provider":"groq","model":"llama-3.3-70b-versatile","tools":[` + strings.Join(tools, ",") + `]},"prompt_config":{"prompt":"You are the support line of Example Inc."}}`)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, dup := duplicateMember(body); dup {
			b.Fatal("duplicate")
		}
	}
}
