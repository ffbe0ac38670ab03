package server_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/internal/testkit"
)

// The docs' JSON examples are held to the API (docs/*.md but tour.md, which TestTour runs,
// and openapi.json, which is generated). Every ```json block is classified by hand in
// docExamples (docs_examples_table_test.go), keyed "file#n" (the n-th json block of the file)
// with the block's first line, so that a new, moved or rewritten block fails
// TestDocsExamplesClassified until someone says what it is. TestDocsExamples then sends
// each request example to a real server and checks each answer example's shape against the
// real answer of the same request (shapeFindings); the checks that need more than one
// request are in docs_examples_*_test.go, by topic. The table is explicit rather than
// guessed from the prose around a block: what a block is stays reviewable.
//
// How a block becomes JSON (docJSON): an example elides with "…". `{…}` or `{…words…}`
// stands for an object whose members are not shown and becomes {"…": "…"}; an unquoted `, …` ending an object or an array
// becomes a "…" member or element; a `"…": "…"` member means "more members" and a "…" array element "more
// elements": neither is sent (stripElided) nor looked for in an answer. A block that is a
// bare member (`"usage": {...}`) is read as the object holding it. A block holding
// `METHOD /path` lines is one request per line, the body after it.
//
// Substitution rule (substitute): a string that is an id placeholder, a prefix, "_", maybe
// a few id characters and "…" or "..." ("agt_…", "num_01JD7…", "ws_..."), becomes the id of
// the env's record of that prefix; the same placeholders and {agent_id}-style parameters
// in a path too. Provider keys and URLs that point outside stay as written: the API only
// stores them.

// docBlock is one ```json block of a doc.
type docBlock struct {
	key   string // "agents.md#3"
	line  int    // of the opening fence
	first string // the first line of the block
	text  string
}

var jsonFence = regexp.MustCompile("(?m)^```json\n((?s:.*?))^```\n")

// docBlocks reads every json block of docs/*.md but tour.md.
func docBlocks(t *testing.T) []docBlock {
	t.Helper()
	files, err := filepath.Glob("../docs/*.md")
	if err != nil || len(files) == 0 {
		t.Fatalf("no docs: %v", err)
	}
	var out []docBlock
	for _, f := range files {
		name := filepath.Base(f)
		if name == "tour.md" {
			continue
		}
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		doc := string(raw)
		for i, m := range jsonFence.FindAllStringSubmatchIndex(doc, -1) {
			text := doc[m[2]:m[3]]
			first, _, _ := strings.Cut(text, "\n")
			out = append(out, docBlock{key: fmt.Sprintf("%s#%d", name, i+1),
				line: strings.Count(doc[:m[0]], "\n") + 1, first: strings.TrimSpace(first), text: text})
		}
	}
	return out
}

var (
	elidedObject  = regexp.MustCompile(`\{…[^{}"]*\}`)
	elidedMember  = regexp.MustCompile(`,\s*…(\s*\})`)
	elidedElement = regexp.MustCompile(`,\s*…(\s*\])`)
	requestLine   = regexp.MustCompile(`(?m)^(GET|POST|PUT|PATCH|DELETE) (/\S+)\s*$`)
)

// docRequest is one body of a block, with the request line above it when the block has one.
type docRequest struct {
	method, path string
	body         any
}

// docJSON parses a block as the rules above say.
func docJSON(t *testing.T, text string) []docRequest {
	t.Helper()
	locs := requestLine.FindAllStringSubmatchIndex(text, -1)
	if len(locs) == 0 {
		return []docRequest{{body: parseDocJSON(t, text)}}
	}
	var out []docRequest
	for i, m := range locs {
		end := len(text)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		out = append(out, docRequest{method: text[m[2]:m[3]], path: text[m[4]:m[5]], body: parseDocJSON(t, text[m[1]:end])})
	}
	return out
}

func parseDocJSON(t *testing.T, text string) any {
	t.Helper()
	s := strings.TrimSpace(text)
	s = elidedObject.ReplaceAllString(s, `{"…": "…"}`)
	s = elidedMember.ReplaceAllString(s, `, "…": "…"$1`)
	s = elidedElement.ReplaceAllString(s, `, "…"$1`)
	if strings.HasPrefix(s, `"`) {
		s = "{" + s + "}"
	}
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("not JSON once elisions are read (%v):\n%s", err, s)
	}
	return v
}

// ellipsis is the doc's "and so on", as a member name or an element.
const ellipsis = "…"

// stripElided drops the "…" members and elements, for sending.
func stripElided(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			if k != ellipsis {
				out[k] = stripElided(e)
			}
		}
		return out
	case []any:
		out := []any{}
		for _, e := range x {
			if e != ellipsis {
				out = append(out, stripElided(e))
			}
		}
		return out
	}
	return v
}

var placeholder = regexp.MustCompile(`\b([a-z]+)_[0-9A-Za-z]{0,6}(?:…|\.\.\.)`)

// substitute replaces the id placeholders of strings (and map keys are left alone).
func (e *docEnv) substitute(t *testing.T, v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, el := range x {
			out[k] = e.substitute(t, el)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, el := range x {
			out[i] = e.substitute(t, el)
		}
		return out
	case string:
		if m := placeholder.FindStringSubmatch(x); m != nil && m[0] == x {
			if id, ok := e.ids[m[1]]; ok {
				return id
			}
		}
	}
	return v
}

var docPathParam = regexp.MustCompile(`\{([a-z]+)_id\}`)

// substitutePath fills a documented path's parameters and placeholders with the env's ids.
func (e *docEnv) substitutePath(t *testing.T, path string) string {
	t.Helper()
	prefixes := map[string]string{"agent": "agt", "workspace": "ws", "number": "num", "campaign": "cmp", "call": "call", "knowledge_base": "kb"}
	path = docPathParam.ReplaceAllStringFunc(path, func(p string) string {
		name := docPathParam.FindStringSubmatch(p)[1]
		if id, ok := e.ids[prefixes[name]]; ok {
			return id
		}
		t.Fatalf("no id for %s", p)
		return p
	})
	return placeholder.ReplaceAllStringFunc(path, func(p string) string {
		if id, ok := e.ids[placeholder.FindStringSubmatch(p)[1]]; ok {
			return id
		}
		t.Fatalf("no id for %s", p)
		return p
	})
}

// shapeFindings lists where real departs from the documented shape doc: a documented key
// missing, another JSON type, an empty array where the doc shows elements; with whole, a
// key of the answer the doc does not show (where the doc's object has no "…" member). A
// documented null accepts anything, a real null any documented string, number or boolean
// (a nullable member), and a "…" value stands for anything.
func shapeFindings(path string, doc, real any, whole bool) []string {
	if doc == nil || doc == ellipsis {
		return nil
	}
	if real == nil {
		switch doc.(type) {
		case map[string]any, []any: // what the doc shows inside cannot be checked
			return []string{fmt.Sprintf("%s: null in the answer, %s in the doc", path, jsonType(doc))}
		}
		return nil // a nullable value, null here
	}
	if jsonType(doc) != jsonType(real) {
		return []string{fmt.Sprintf("%s: %s in the answer, %s in the doc", path, jsonType(real), jsonType(doc))}
	}
	var out []string
	switch d := doc.(type) {
	case map[string]any:
		r := real.(map[string]any)
		free := freeKeyed[lastMember(path)]
		keys := sortedKeys(d)
		for _, k := range keys {
			if k == ellipsis {
				continue
			}
			if _, ok := r[k]; !ok {
				if free {
					continue
				}
				out = append(out, fmt.Sprintf("%s.%s: in the doc, not in the answer", path, k))
				continue
			}
			out = append(out, shapeFindings(path+"."+k, d[k], r[k], whole)...)
		}
		if _, elided := d[ellipsis]; whole && !elided && !free {
			for _, k := range sortedKeys(r) {
				if _, ok := d[k]; !ok {
					out = append(out, fmt.Sprintf("%s.%s: in the answer, not in the doc", path, k))
				}
			}
		}
	case []any:
		r := real.([]any)
		for i, el := range d {
			if el == ellipsis {
				continue
			}
			if len(r) == 0 {
				out = append(out, fmt.Sprintf("%s: empty in the answer; the doc shows elements", path))
				break
			}
			out = append(out, shapeFindings(fmt.Sprintf("%s[%d]", path, i), el, r[min(i, len(r)-1)], whole)...)
		}
	}
	return out
}

// freeKeyed are the members whose objects are keyed by data (a variable's name, a
// currency, a reason, a tool's argument), not by the API: an example shows some keys, a
// real answer others, and only the keys both have are compared.
var freeKeyed = map[string]bool{"variables": true, "default_variables": true, "metadata": true, "values": true,
	"cost_micros": true, "disconnection_reasons": true, "mocks": true, "arguments": true, "result": true,
	"custom_sip_headers": true, "body": true}

// lastMember is the name of the member a shape path ends at ("$.a.b[2]" → "b").
func lastMember(path string) string {
	for strings.HasSuffix(path, "]") {
		path = path[:strings.LastIndexByte(path, '[')]
	}
	return path[strings.LastIndexByte(path, '.')+1:]
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "boolean"
	}
	return fmt.Sprintf("%T", v)
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// expectShape fails with every finding of the answer r against the doc's example.
func expectShape(t *testing.T, doc any, r *testkit.Response, whole bool) {
	t.Helper()
	var real any
	if err := json.Unmarshal(r.Body, &real); err != nil {
		t.Fatalf("answer is not JSON: %v: %s", err, r.Body)
	}
	if f := shapeFindings("$", doc, real, whole); len(f) > 0 {
		t.Errorf("the doc's example departs from the real answer:\n  %s\nanswer: %s", strings.Join(f, "\n  "), r.Body)
	}
}

// expectMember checks a member the doc shows alone (a call's "cost", a record's
// "embeddings") against the answer's value at path, a list of member names and indexes.
func expectMember(t *testing.T, doc any, r *testkit.Response, whole bool, path ...any) {
	t.Helper()
	var real any
	if err := json.Unmarshal(r.Body, &real); err != nil {
		t.Fatalf("answer is not JSON: %v: %s", err, r.Body)
	}
	where := "$"
	for _, step := range path {
		switch s := step.(type) {
		case string:
			m, _ := real.(map[string]any)
			real, where = m[s], where+"."+s
		case int:
			l, _ := real.([]any)
			if s >= len(l) {
				t.Fatalf("%s has no element %d: %s", where, s, r.Body)
			}
			real, where = l[s], fmt.Sprintf("%s[%d]", where, s)
		}
	}
	if f := shapeFindings(where, doc, real, whole); len(f) > 0 {
		t.Errorf("the doc's example departs from the real answer:\n  %s\nanswer: %s", strings.Join(f, "\n  "), r.Body)
	}
}

func TestDocsExamplesClassified(t *testing.T) {
	seen := map[string]bool{}
	for _, b := range docBlocks(t) {
		seen[b.key] = true
		ex, ok := docExamples[b.key]
		switch {
		case !ok:
			t.Errorf("%s (line %d, %q) is not classified: add it to docExamples", b.key, b.line, b.first)
		case ex.first != b.first:
			t.Errorf("%s (line %d) starts %q, docExamples says %q: a block moved or changed; classify it again", b.key, b.line, b.first, ex.first)
		case ex.check == nil && ex.why == "":
			t.Errorf("%s: neither checked nor said why not", b.key)
		}
		docJSON(t, b.text) // every block reads as JSON under the elision rules
	}
	for key := range docExamples {
		if !seen[key] {
			t.Errorf("docExamples has %s, which no doc holds", key)
		}
	}
}

func TestDocsExamples(t *testing.T) {
	e := newDocEnv(t)
	blocks := docBlocks(t)
	for _, b := range blocks {
		ex, ok := docExamples[b.key]
		if !ok || ex.check == nil {
			continue
		}
		t.Run(b.key, func(t *testing.T) {
			ex.check(e, t, docJSON(t, b.text))
		})
	}
}
