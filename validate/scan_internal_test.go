package validate

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"testing"
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
		if isNum != (isNumber(trim(b)) && parseErr == nil) || isNum && gotNum != num {
			t.Fatalf("%q: isNumber %v, ParseFloat %v %v, encoding/json %v %v", b, isNumber(trim(b)), gotNum, parseErr, num, numErr)
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
