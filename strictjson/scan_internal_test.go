package strictjson

import (
	"bytes"
	"encoding/json"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
)

// FuzzSplitMatchesEncodingJSON checks the splitter against encoding/json on every valid
// JSON input: the same members, items, strings and numbers, and a refusal exactly where
// encoding/json refuses the shape. (Invalid JSON never reaches the splitter: its callers
// pass what encoding/json has parsed.)
func FuzzSplitMatchesEncodingJSON(f *testing.F) {
	for _, s := range []string{
		`{}`, `[]`, `{"a":1,"b":[1,{"c":"]"}],"a":2}`, ` { "k\u00e9y" : "v\\"al" , "x":null } `,
		`["a", {"b": [true, false]}, -0.5e3, "\ud800"]`, `"caf\u00e9"`, `"plain"`, `12`, `null`,
		"\"\xff\"", `{"":{"":[]}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) {
			return
		}
		var obj map[string]json.RawMessage
		objErr := json.Unmarshal(b, &obj)
		got, ok := splitObject(b)
		if (objErr == nil && obj != nil) != ok {
			t.Fatalf("%q: splitObject ok %v, encoding/json %v", b, ok, objErr)
		}
		if ok && !maps.EqualFunc(got, obj, func(x, y json.RawMessage) bool { return string(x) == string(y) }) {
			t.Fatalf("%q: members %q, encoding/json %q", b, got, obj)
		}
		var items []json.RawMessage
		arrErr := json.Unmarshal(b, &items)
		gotItems, ok := splitArray(b)
		if (arrErr == nil && items != nil) != ok {
			t.Fatalf("%q: splitArray ok %v, encoding/json %v", b, ok, arrErr)
		}
		if ok && !slices.EqualFunc(gotItems, items, func(x, y json.RawMessage) bool { return string(x) == string(y) }) {
			t.Fatalf("%q: items %q, encoding/json %q", b, gotItems, items)
		}
		var num float64
		numErr := json.Unmarshal(b, &num)
		gotNum, parseErr := strconv.ParseFloat(string(trim(b)), 64)
		isNum := numErr == nil && string(trim(b)) != "null"
		if isNum != (data.IsJSONNumber(string(trim(b))) && parseErr == nil) || isNum && gotNum != num {
			t.Fatalf("%q: isNumber %v, ParseFloat %v %v, encoding/json %v %v", b, data.IsJSONNumber(string(trim(b))), gotNum, parseErr, num, numErr)
		}
		var str string
		strErr := json.Unmarshal(b, &str)
		gotStr, ok := unquote(b)
		isStr := strErr == nil && string(trim(b)) != "null"
		if isStr != ok || ok && gotStr != str {
			t.Fatalf("%q: unquote %q %v, encoding/json %q %v", b, gotStr, ok, str, strErr)
		}
	})
}

// leafTarget has a field of every kind the strict decoder decodes, without ints (whose
// rules differ from encoding/json's on purpose: 60000.0 is an integer; see
// FuzzIntLeafRules).
type leafTarget struct {
	S   string            `json:"s"`
	F   float64           `json:"f"`
	B   bool              `json:"b"`
	PS  *string           `json:"ps"`
	PF  *float64          `json:"pf"`
	PB  *bool             `json:"pb"`
	SS  []string          `json:"ss"`
	M   map[string]string `json:"m"`
	In  *leafTarget       `json:"in"`
	Arr []*leafTarget     `json:"arr"`
	Val []leafTarget      `json:"val"`
	Raw json.RawMessage   `json:"raw"`
	Any any               `json:"any"`
}

// FuzzStrictMatchesEncodingJSON decodes arbitrary valid JSON both strictly (with the
// string arena of a merge on) and with encoding/json: what the strict decoder accepts,
// encoding/json accepts with the same value; what encoding/json accepts without unknown
// fields, the strict decoder accepts too, but for nulls given to fields that are not
// nullable and for member names that match a field only case-insensitively.
func FuzzStrictMatchesEncodingJSON(f *testing.F) {
	for _, s := range []string{
		`{"s":"plain","f":1.5e3,"b":true,"ps":"caf\u00e9","pf":-0,"pb":false,"ss":["a","\ud83d\ude00","\ud800x"]}`,
		`{"m":{"k\"ey":"v\\al","":"\/"},"in":{"s":"\t\n"},"arr":[null,{"b":false},{"ss":[]}],"val":[{}],"raw":{"x":[1]},"any":[1,"a",null]}`,
		"{\"s\":\"\xff\xfe\",\"ps\":\"\\udc00\\ud800\\udc00\"}", `{"s":null}`, `{"f":"1"}`, `{"nope":1}`, `[]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) {
			return
		}
		if _, _, dup := duplicateMember(b); dup {
			// Decode refuses a name given twice before this decoder sees the body
			// (TestObjectRefusesDuplicates), and the two disagree on such a body:
			// encoding/json reports a wrong type in any copy, this decoder reads the last.
			return
		}
		var got leafTarget
		var errs faultList
		d := newDecoder("", &errs)
		d.src = b
		decodeValue(d, b, reflect.ValueOf(&got).Elem())
		var want leafTarget
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		dec.UseNumber() // as strict decodes an any: numbers keep their text
		jsonErr := dec.Decode(&want)
		if len(errs.Paths()) == 0 {
			if jsonErr != nil {
				t.Fatalf("%q: strict accepts, encoding/json: %v", b, jsonErr)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%q:\nstrict       %#v\nencoding/json %#v", b, got, want)
			}
			return
		}
		if jsonErr == nil {
			for _, p := range errs.Paths() {
				for _, msg := range errs.Messages(p) {
					// encoding/json also matches member names case-insensitively.
					if !strings.HasSuffix(msg, "must not be null.") && !strings.HasSuffix(msg, "is not a known field.") &&
						!strings.Contains(msg, "holds a number out of range") {
						t.Fatalf("%q: encoding/json accepts, strict: %v", b, errs.Paths())
					}
				}
			}
		}
	})
}

// FuzzIntLeafRules holds the integer rule to its definition: what encoding/json decodes
// as an int64 is that int64; otherwise a JSON number that is an integral float64 of at
// most 2^53 in magnitude is that integer (60000.0, 6e4); anything else is refused.
func FuzzIntLeafRules(f *testing.F) {
	for _, s := range []string{`60000`, `60000.0`, `6e4`, `1.5`, `-0`, `1e300`, `9007199254740993`, `9007199254740993.0`, `"1"`, `null`, `true`, `-1E+2`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) || string(trim(b)) == "null" {
			return
		}
		var got int64
		var errs faultList
		decodeValue(newDecoder("", &errs), b, reflect.ValueOf(&got).Elem())
		var want int64
		wantOK := json.Unmarshal(b, &want) == nil
		if !wantOK {
			var fl float64
			if json.Unmarshal(b, &fl) == nil && fl == math.Trunc(fl) && math.Abs(fl) <= 1<<53 {
				want, wantOK = int64(fl), true
			}
		}
		if (len(errs.Paths()) == 0) != wantOK || wantOK && got != want {
			t.Fatalf("%q: strict %d %v, want %d %v", b, got, errs.Paths(), want, wantOK)
		}
	})
}

// splitObject returns the members of the JSON object raw; the last of duplicate keys wins,
// as with encoding/json. ok is false when raw is not an object.
func splitObject(raw []byte) (map[string]json.RawMessage, bool) {
	ms, ok := scanObject(trim(raw), nil)
	if !ok {
		return nil, false
	}
	obj := make(map[string]json.RawMessage, len(ms))
	for _, m := range ms {
		obj[string(m.key)] = m.raw
	}
	return obj, true
}

// splitArray returns the items of the JSON array raw; ok is false when raw is not one.
func splitArray(raw []byte) ([]json.RawMessage, bool) {
	items, ok := scanArray(trim(raw), nil)
	if !ok {
		return nil, false
	}
	out := make([]json.RawMessage, len(items))
	for i, item := range items {
		out[i] = item
	}
	return out, true
}

// unquote decodes a JSON string literal, as encoding/json does.
func unquote(lit []byte) (string, bool) {
	b, ok := unquoteBytes(trim(lit))
	if !ok {
		return "", false
	}
	return string(b), true
}
