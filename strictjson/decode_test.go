package strictjson

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
)

type decInner struct {
	Name string `json:"name"`
	N    int    `json:"n"`
}

type decTarget struct {
	Int     int               `json:"int"`
	Int32   int32             `json:"int32"`
	Float   float64           `json:"float"`
	Bool    bool              `json:"bool"`
	Str     string            `json:"str"`
	Ptr     *int              `json:"ptr"`
	NonNull *int              `json:"non_null" strict:"nonnull"`
	Map     map[string]string `json:"map"`
	Inner   decInner          `json:"inner"`
	Items   []decInner        `json:"items"`
	Ptrs    []*decInner       `json:"ptrs"`
	Raw     json.RawMessage   `json:"raw"`
	When    data.Time         `json:"when"`
	Skipped string            `json:"-"`
}

// strict decodes body into a decTarget and returns the faults by path.
func strict(t *testing.T, body string) (decTarget, map[string][]string) {
	t.Helper()
	var v decTarget
	var errs faultList
	Strict(json.RawMessage(body), &v, "", &errs)
	if err := errs.err(); err != nil {
		return v, err.(*data.Error).Fields
	}
	return v, nil
}

func TestStrictFaults(t *testing.T) {
	for _, c := range []struct {
		name, body, fault string
	}{
		{"unknown top level", `{"nope":1}`, "nope"},
		{"unknown nested", `{"inner":{"nme":"x"}}`, "inner.nme"},
		{"unknown in an array item", `{"items":[{"name":"a"},{"nam":"b"}]}`, "items.1.nam"},
		{"json:\"-\" is unknown", `{"Skipped":"x"}`, "Skipped"},
		{"string for int", `{"int":"1"}`, "int"},
		{"fraction for int", `{"int":1.5}`, "int"},
		{"huge float for int", `{"int":1e300}`, "int"},
		{"int32 overflow", `{"int32":3000000000}`, "int32"},
		{"number for string", `{"str":1}`, "str"},
		{"string for float", `{"float":"1"}`, "float"},
		{"string for bool", `{"bool":"true"}`, "bool"},
		{"array for object", `{"inner":[]}`, "inner"},
		{"object for array", `{"items":{}}`, "items"},
		{"string for map", `{"map":"x"}`, "map"},
		{"wrong map value", `{"map":{"a":1}}`, "map.a"},
		{"wrong nested type", `{"items":[{"n":"x"}]}`, "items.0.n"},
		{"null for int", `{"int":null}`, "int"},
		{"null for string", `{"str":null}`, "str"},
		{"null for struct", `{"inner":null}`, "inner"},
		{"null for slice", `{"items":null}`, "items"},
		{"null struct item", `{"items":[null]}`, "items.0"},
		{"null for nonnull pointer", `{"non_null":null}`, "non_null"},
		{"bad timestamp", `{"when":"yesterday"}`, "when"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, faults := strict(t, c.body)
			if len(faults) != 1 || faults[c.fault] == nil {
				t.Fatalf("want exactly a fault on %s, got %v", c.fault, faults)
			}
		})
	}
}

func TestStrictAccepts(t *testing.T) {
	v, faults := strict(t, `{"int":60000.0,"int32":6e4,"float":1.5,"bool":true,"str":"s","ptr":null,"non_null":0,
		"map":null,"inner":{"name":"x","n":2},"items":[],"ptrs":[null,{"name":"y"}],"raw":{"any":[1]},"when":"2026-11-21T10:04:05.123456Z"}`)
	if faults != nil {
		t.Fatal(faults)
	}
	if v.Int != 60000 || v.Int32 != 60000 || v.Float != 1.5 || !v.Bool || v.Str != "s" || v.Ptr != nil || v.Map != nil {
		t.Errorf("scalars: %+v", v)
	}
	if v.NonNull == nil || *v.NonNull != 0 {
		t.Errorf("non_null 0 must be kept as a value: %v", v.NonNull)
	}
	if v.Ptrs[0] != nil || v.Ptrs[1] == nil || v.Ptrs[1].Name != "y" || len(v.Items) != 0 || v.Items == nil {
		t.Errorf("slices: %+v %+v", v.Ptrs, v.Items)
	}
	if string(v.Raw) != `{"any":[1]}` || v.When.Format(data.TimeLayout) != "2026-11-21T10:04:05.123Z" {
		t.Errorf("raw %s, when %v", v.Raw, v.When)
	}
}

func TestStrictReportsEveryFault(t *testing.T) {
	_, faults := strict(t, `{"int":"x","str":null,"inner":{"n":true,"zz":1},"items":[{"n":1},{"name":2}]}`)
	want := []string{"int", "str", "inner.n", "inner.zz", "items.1.name"}
	if len(faults) != len(want) {
		t.Fatalf("want %v, got %v", want, faults)
	}
	for _, p := range want {
		if faults[p] == nil {
			t.Errorf("no fault on %s", p)
		}
	}
}

func TestObject(t *testing.T) {
	for _, c := range []struct {
		body string
		ok   bool
	}{
		{``, true}, {` {"a":1} `, true}, {`[]`, false}, {`"x"`, false}, {`null`, false}, {`{"a":`, false}, {`{} {}`, false},
		// JSON's white space is space, tab, CR and LF (RFC 8259 §2), nothing else around the
		// object: a form feed, vertical tab, NEL or no-break space after it was trimmed as if
		// it were (FuzzCallBody found "{\"\":0,\"\":0}\f" refused by its member, not as malformed).
		{"\t{\"a\":1}\r\n", true}, {"{\"a\":1}\f", false}, {"\v{\"a\":1}", false},
		{"{\"a\":1}\u0085", false}, {"{\"a\":1}\u00a0", false}, {"{\"a\":0,\"a\":0}\f", false}, {"\f", false},
	} {
		_, err := Object([]byte(c.body))
		if (err == nil) != c.ok {
			t.Errorf("%q: err %v", c.body, err)
		}
		if err != nil && data.ErrorCode(err) != data.EMALFORMED {
			t.Errorf("%q: code %s", c.body, data.ErrorCode(err))
		}
	}
}

func TestDecode(t *testing.T) {
	var v decInner
	if err := Decode([]byte("{\"name\":\"a\"}\u00a0"), &v); data.ErrorCode(err) != data.EMALFORMED {
		t.Errorf("a no-break space after the object: %v, want malformed_json", err)
	}
	err := Decode([]byte(`{"name":"a","x":1}`), &v)
	var e *data.Error
	if err == nil || !reflect.DeepEqual(err.(*data.Error).SortedFieldPaths(), []string{"x"}) {
		t.Fatalf("err %v (%T)", err, e)
	}
}

// An Opt refuses null unless its value is a pointer: Opt[*string] tells a given null
// (Set, nil) from an absent member (not Set).
func TestOptNullOnlyForPointers(t *testing.T) {
	type body struct {
		Name  data.Opt[string]  `json:"name"`
		Agent data.Opt[*string] `json:"agent"`
	}
	var b body
	if err := Decode([]byte(`{"agent": null}`), &b); err != nil {
		t.Fatalf("null for Opt[*string]: %v", err)
	}
	if !b.Agent.Set || b.Agent.V != nil || b.Name.Set {
		t.Fatalf("got %+v, want agent set to nil and name absent", b)
	}
	b = body{}
	if err := Decode([]byte(`{"agent": "agt_x"}`), &b); err != nil || !b.Agent.Set || b.Agent.V == nil || *b.Agent.V != "agt_x" {
		t.Fatalf("value for Opt[*string]: %+v, %v", b, err)
	}
	err := Decode([]byte(`{"name": null}`), &body{})
	if e, ok := err.(*data.Error); !ok || len(e.Fields["name"]) == 0 {
		t.Fatalf("null for Opt[string] not refused on name: %v", err)
	}
}

// A member tagged strict:"readonly" is refused whatever its value, naming it read-only.
func TestStrictReadOnly(t *testing.T) {
	var v struct {
		ID   data.ReadOnly `json:"id" strict:"readonly"`
		Name string        `json:"name"`
	}
	var errs faultList
	StrictObject(map[string]json.RawMessage{"id": json.RawMessage(`null`), "name": json.RawMessage(`"n"`)}, &v, "", &errs)
	if len(errs.Paths()) != 1 || errs.Messages("id")[0] != "The id field is read-only." || v.Name != "n" {
		t.Fatalf("faults %v, name %q", errs.Paths(), v.Name)
	}
}

// U+0000 is refused in any string, name or value at any depth, with the field named;
// an escaped backslash before "u0000" is text, not the character.
func TestDecodeRefusesNUL(t *testing.T) {
	type body struct {
		Name  string          `json:"name"`
		Tags  []string        `json:"tags"`
		Extra json.RawMessage `json:"extra"`
		Any   any             `json:"any"`
	}
	for _, c := range []struct{ body, path string }{
		{`{"name":"a\u0000b"}`, "name"},
		{`{"tags":["x","\u0000"]}`, "tags.1"},
		{`{"extra":{"deep":[1,{"k":"\u0000"}]}}`, "extra.deep.1.k"},
		{`{"any":{"k\u0000":1}}`, "any.k\x00"},
		{`{"name":"ok","any":"\u0000"}`, "any"},
		{`{"name":"\\u0000"}`, ""},
		{`{"name":"\u0001"}`, ""},
	} {
		err := Decode([]byte(c.body), &body{})
		if c.path == "" {
			if err != nil {
				t.Errorf("%s: %v, want accepted", c.body, err)
			}
			continue
		}
		e, ok := err.(*data.Error)
		if !ok || e.Code != data.EINVALID || len(e.Fields[c.path]) != 1 || !strings.Contains(e.Fields[c.path][0], "U+0000") {
			t.Errorf("%s: %v, want a validation fault naming %q", c.body, err, c.path)
		}
		if _, err := Object([]byte(c.body)); data.ErrorCode(err) != data.EINVALID {
			t.Errorf("Object(%s): %v, want validation_failed", c.body, err)
		}
	}
}

// A member tagged strict:"required" left out is a fault at its path, in a nested object
// and a list's item too; given (its zero value included) it is none.
func TestRequiredTag(t *testing.T) {
	type item struct {
		Weight int `json:"weight" strict:"required"`
		Other  int `json:"other"`
	}
	type body struct {
		Items     []item   `json:"items"`
		Threshold float64  `json:"threshold" strict:"required"`
		On        []string `json:"on" strict:"required"`
	}
	cases := []struct {
		body   string
		faults []string
	}{
		{`{"items": [{"weight": 0}], "threshold": 0, "on": []}`, nil},
		{`{"threshold": 0.5, "on": ["busy"]}`, nil},
		{`{"items": [{"weight": 1}, {"other": 2}], "on": []}`, []string{"items.1.weight", "threshold"}},
		{`{}`, []string{"on", "threshold"}},
		{``, []string{"on", "threshold"}},
		// Decoded through the slower path (a duplicated member): the same faults.
		{`{"on": [], "on": [], "items": [{}]}`, []string{"items.0.weight", "on", "threshold"}},
		{`{"on": null, "threshold": null}`, []string{"on", "threshold"}},
	}
	for _, c := range cases {
		var v body
		err := Decode([]byte(c.body), &v)
		var got []string
		var e *data.Error
		if errors.As(err, &e) {
			got = e.SortedFieldPaths()
		} else if err != nil {
			t.Fatalf("%s: %v", c.body, err)
		}
		if !slices.Equal(got, c.faults) {
			t.Errorf("%s: faults %v, want %v", c.body, got, c.faults)
		}
	}
}
