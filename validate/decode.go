package validate

import (
	"bytes"
	"encoding"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/voiceapi/voiceapi/data"
)

// Object parses body as a JSON object. Anything else is malformed_json (400): the request
// could not be read at all, so there are no fields to name.
func Object(body []byte) (map[string]json.RawMessage, error) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return map[string]json.RawMessage{}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	var obj map[string]json.RawMessage
	if err := dec.Decode(&obj); err != nil || obj == nil {
		if err == nil || strings.Contains(err.Error(), "cannot unmarshal") {
			return nil, data.Errorf(data.EMALFORMED, "The request body must be a JSON object.")
		}
		return nil, data.Errorf(data.EMALFORMED, "The request body is not valid JSON: %v.", err)
	}
	if dec.More() {
		return nil, data.Errorf(data.EMALFORMED, "The request body must hold one JSON object and nothing after it.")
	}
	return obj, nil
}

// Decode reads body strictly into dst, a pointer to a struct: see Strict.
func Decode(body []byte, dst any) error {
	obj, err := Object(body)
	if err != nil {
		return err
	}
	var errs Errors
	StrictObject(obj, dst, "", &errs)
	return errs.Err()
}

// StrictObject decodes the members of obj into the struct dst points to, as Strict does.
func StrictObject(obj map[string]json.RawMessage, dst any, path string, errs *Errors) {
	v := reflect.ValueOf(dst).Elem()
	decodeStructMembers(obj, v, path, errs)
}

// Strict decodes raw into dst (a pointer) and records, under dot paths, every member the
// type does not know (conventions §1), every value of the wrong JSON type, and every null
// given for a field that is not nullable. Nullable fields are pointers, maps or
// json.RawMessage; slices and structs are not nullable. A struct field tagged
// strict:"nonnull" is not nullable either: it is a pointer or map only so that its
// absence can be told from its zero value.
func Strict(raw json.RawMessage, dst any, path string, errs *Errors) {
	decodeValue(raw, reflect.ValueOf(dst).Elem(), path, errs)
}

var (
	rawMessageType = reflect.TypeFor[json.RawMessage]()
	unmarshalerT   = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalT = reflect.TypeFor[encoding.TextUnmarshaler]()
	optionalT      = reflect.TypeFor[interface{ Optional() }]()
)

func decodeValue(raw json.RawMessage, v reflect.Value, path string, errs *Errors) {
	isNull := bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
	t := v.Type()
	if t == rawMessageType {
		v.SetBytes(append([]byte(nil), raw...))
		return
	}
	if t.Kind() == reflect.Pointer {
		if isNull {
			v.Set(reflect.Zero(t))
			return
		}
		elem := reflect.New(t.Elem())
		decodeValue(raw, elem.Elem(), path, errs)
		v.Set(elem)
		return
	}
	if isNull {
		if t.Kind() == reflect.Map || t.Kind() == reflect.Interface {
			v.Set(reflect.Zero(t))
			return
		}
		errs.Addf(path, "The %s field must not be null.", path)
		return
	}
	if t.Implements(optionalT) {
		// data.Opt: decode into V, mark Set. A null never reaches here (refused above).
		decodeValue(raw, v.Field(1), path, errs)
		v.Field(0).SetBool(true)
		return
	}
	if reflect.PointerTo(t).Implements(unmarshalerT) {
		if err := v.Addr().Interface().(json.Unmarshaler).UnmarshalJSON(raw); err != nil {
			errs.Addf(path, "The %s field is invalid: %v.", path, err)
		}
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		var obj map[string]json.RawMessage
		if json.Unmarshal(raw, &obj) != nil || obj == nil {
			errs.Addf(path, "The %s field must be an object.", path)
			return
		}
		decodeStructMembers(obj, v, path, errs)
	case reflect.Slice:
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) != nil {
			errs.Addf(path, "The %s field must be an array.", path)
			return
		}
		s := reflect.MakeSlice(t, len(items), len(items))
		for i, item := range items {
			decodeValue(item, s.Index(i), Index(path, i), errs)
		}
		v.Set(s)
	case reflect.Map:
		var obj map[string]json.RawMessage
		if json.Unmarshal(raw, &obj) != nil || obj == nil || t.Key().Kind() != reflect.String {
			errs.Addf(path, "The %s field must be an object.", path)
			return
		}
		m := reflect.MakeMapWithSize(t, len(obj))
		for k, item := range obj {
			elem := reflect.New(t.Elem()).Elem()
			decodeValue(item, elem, Join(path, k), errs)
			m.SetMapIndex(reflect.ValueOf(k).Convert(t.Key()), elem)
		}
		v.Set(m)
	case reflect.String:
		var s string
		if json.Unmarshal(raw, &s) != nil {
			errs.Addf(path, "The %s field must be a string.", path)
			return
		}
		if reflect.PointerTo(t).Implements(textUnmarshalT) {
			if err := v.Addr().Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(s)); err != nil {
				errs.Addf(path, "The %s field is invalid: %v.", path, err)
			}
			return
		}
		v.SetString(s)
	case reflect.Bool:
		var b bool
		if json.Unmarshal(raw, &b) != nil {
			errs.Addf(path, "The %s field must be true or false.", path)
			return
		}
		v.SetBool(b)
	case reflect.Int, reflect.Int32, reflect.Int64:
		var f json.Number
		if json.Unmarshal(raw, &f) != nil || !isNumber(raw) {
			errs.Addf(path, "The %s field must be an integer.", path)
			return
		}
		n, err := f.Int64()
		if err != nil {
			fl, ferr := f.Float64()
			if ferr != nil || fl != math.Trunc(fl) || math.Abs(fl) > 1<<53 {
				errs.Addf(path, "The %s field must be an integer.", path)
				return
			}
			n = int64(fl)
		}
		if v.OverflowInt(n) {
			errs.Addf(path, "The %s field is out of range.", path)
			return
		}
		v.SetInt(n)
	case reflect.Float32, reflect.Float64:
		var f float64
		if !isNumber(raw) || json.Unmarshal(raw, &f) != nil {
			errs.Addf(path, "The %s field must be a number.", path)
			return
		}
		v.SetFloat(f)
	case reflect.Interface:
		var x any
		if err := json.Unmarshal(raw, &x); err != nil {
			errs.Addf(path, "The %s field is invalid.", path)
			return
		}
		v.Set(reflect.ValueOf(x))
	default:
		panic(fmt.Sprintf("validate: cannot decode into %s", t))
	}
}

func isNumber(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && (raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9')
}

func decodeStructMembers(obj map[string]json.RawMessage, v reflect.Value, path string, errs *Errors) {
	fields := fieldsOf(v.Type())
	// Sorted keys: messages come out in a stable order.
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		f, ok := fields[k]
		p := Join(path, k)
		if !ok {
			errs.Addf(p, "The %s field is not a known field.", p)
			continue
		}
		if f.nonNull && bytes.Equal(bytes.TrimSpace(obj[k]), []byte("null")) {
			errs.Addf(p, "The %s field must not be null.", p)
			continue
		}
		decodeValue(obj[k], v.FieldByIndex(f.index), p, errs)
	}
}

var fieldCache sync.Map // reflect.Type → map[string]fieldInfo

// fieldInfo locates a struct field and says whether null is refused for it.
type fieldInfo struct {
	index   []int
	nonNull bool
}

// fieldsOf maps JSON member names to struct fields, following embedded structs.
func fieldsOf(t reflect.Type) map[string]fieldInfo {
	if m, ok := fieldCache.Load(t); ok {
		return m.(map[string]fieldInfo)
	}
	m := map[string]fieldInfo{}
	for _, f := range reflect.VisibleFields(t) {
		if !f.IsExported() || f.Anonymous {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		m[name] = fieldInfo{index: f.Index, nonNull: f.Tag.Get("strict") == "nonnull"}
	}
	fieldCache.Store(t, m)
	return m
}

// Merge overlays the members of patch onto the JSON object of base, member by member (a
// member given as null stays null; arrays and objects given are taken whole), and returns
// the merged object. It is how an update merges a given config group into the stored one.
func Merge(base any, patch map[string]json.RawMessage) (map[string]json.RawMessage, error) {
	b, err := json.Marshal(base)
	if err != nil {
		return nil, err
	}
	merged := map[string]json.RawMessage{}
	if err := json.Unmarshal(b, &merged); err != nil {
		return nil, err
	}
	for k, v := range patch {
		merged[k] = v
	}
	return merged, nil
}
