package validate

import (
	"bytes"
	"encoding"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
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
	decodeValue(raw, reflect.ValueOf(dst).Elem(), pathAt{parent: path}, errs)
}

var (
	rawMessageType = reflect.TypeFor[json.RawMessage]()
	unmarshalerT   = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalT = reflect.TypeFor[encoding.TextUnmarshaler]()
	optionalT      = reflect.TypeFor[interface{ Optional() }]()
)

// typeTraits are the interface checks decodeValue makes on a type, cached: reflect's
// Implements was a visible share of a body's decode.
type typeTraits struct{ optional, unmarshaler, textUnmarshaler bool }

var traitCache sync.Map // reflect.Type → typeTraits

func traitsOf(t reflect.Type) typeTraits {
	if tr, ok := traitCache.Load(t); ok {
		return tr.(typeTraits)
	}
	pt := reflect.PointerTo(t)
	tr := typeTraits{t.Implements(optionalT), pt.Implements(unmarshalerT), pt.Implements(textUnmarshalT)}
	traitCache.Store(t, tr)
	return tr
}

func decodeValue(raw json.RawMessage, v reflect.Value, at pathAt, errs *Errors) {
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
		decodeValue(raw, elem.Elem(), at, errs)
		v.Set(elem)
		return
	}
	if isNull {
		if t.Kind() == reflect.Map || t.Kind() == reflect.Interface {
			v.Set(reflect.Zero(t))
			return
		}
		at.fault(errs, "The %s field must not be null.")
		return
	}
	traits := traitsOf(t)
	if traits.optional {
		// data.Opt: decode into V, mark Set. A null never reaches here (refused above).
		decodeValue(raw, v.Field(1), at, errs)
		v.Field(0).SetBool(true)
		return
	}
	if traits.unmarshaler {
		if err := v.Addr().Interface().(json.Unmarshaler).UnmarshalJSON(raw); err != nil {
			at.fault(errs, "The %s field is invalid: %v.", err)
		}
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		obj, ok := splitObject(raw)
		if !ok {
			at.fault(errs, "The %s field must be an object.")
			return
		}
		decodeStructMembers(obj, v, at.String(), errs)
	case reflect.Slice:
		items, ok := splitArray(raw)
		if !ok {
			at.fault(errs, "The %s field must be an array.")
			return
		}
		s := reflect.MakeSlice(t, len(items), len(items))
		parent := at.String()
		for i, item := range items {
			decodeValue(item, s.Index(i), pathAt{parent, strconv.Itoa(i), pathIndex}, errs)
		}
		v.Set(s)
	case reflect.Map:
		obj, ok := splitObject(raw)
		if !ok || t.Key().Kind() != reflect.String {
			at.fault(errs, "The %s field must be an object.")
			return
		}
		m := reflect.MakeMapWithSize(t, len(obj))
		parent := at.String()
		for k, item := range obj {
			elem := reflect.New(t.Elem()).Elem()
			decodeValue(item, elem, pathAt{parent, k, pathMember}, errs)
			m.SetMapIndex(reflect.ValueOf(k).Convert(t.Key()), elem)
		}
		v.Set(m)
	case reflect.String:
		s, ok := unquote(raw)
		if !ok {
			at.fault(errs, "The %s field must be a string.")
			return
		}
		if traits.textUnmarshaler {
			if err := v.Addr().Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(s)); err != nil {
				at.fault(errs, "The %s field is invalid: %v.", err)
			}
			return
		}
		v.SetString(s)
	case reflect.Bool:
		switch string(trim(raw)) {
		case "true":
			v.SetBool(true)
		case "false":
			v.SetBool(false)
		default:
			at.fault(errs, "The %s field must be true or false.")
		}
	case reflect.Int, reflect.Int32, reflect.Int64:
		num := trim(raw)
		if !isNumber(num) {
			at.fault(errs, "The %s field must be an integer.")
			return
		}
		n, err := strconv.ParseInt(string(num), 10, 64)
		if err != nil {
			fl, ferr := strconv.ParseFloat(string(num), 64)
			if ferr != nil || fl != math.Trunc(fl) || math.Abs(fl) > 1<<53 {
				at.fault(errs, "The %s field must be an integer.")
				return
			}
			n = int64(fl)
		}
		if v.OverflowInt(n) {
			at.fault(errs, "The %s field is out of range.")
			return
		}
		v.SetInt(n)
	case reflect.Float32, reflect.Float64:
		f, err := strconv.ParseFloat(string(trim(raw)), 64)
		if !isNumber(trim(raw)) || err != nil {
			at.fault(errs, "The %s field must be a number.")
			return
		}
		v.SetFloat(f)
	case reflect.Interface:
		var x any
		if err := json.Unmarshal(raw, &x); err != nil {
			at.fault(errs, "The %s field is invalid.")
			return
		}
		v.Set(reflect.ValueOf(x))
	default:
		panic(fmt.Sprintf("validate: cannot decode into %s", t))
	}
}

// isNumber reports whether raw is a JSON number, by the grammar of RFC 8259: strconv
// alone would also take "Inf", "0x10" or "1_0".
// pathAt is the dot path of a value, joined only when a fault or a nested level needs it:
// building every leaf's path up front was a large share of a body's allocations.
type pathAt struct {
	parent, name string
	kind         int
}

const (
	pathSelf   = iota // the path is parent itself
	pathMember        // Join(parent, name)
	pathIndex         // Index(parent, name)
)

func (p pathAt) String() string {
	switch p.kind {
	case pathMember:
		return Join(p.parent, p.name)
	case pathIndex:
		return p.parent + "." + p.name
	}
	return p.parent
}

// fault records a message whose first verb is the path itself.
func (p pathAt) fault(errs *Errors, format string, args ...any) {
	s := p.String()
	errs.Addf(s, format, append([]any{s}, args...)...)
}

func isNumber(raw []byte) bool {
	i := 0
	if i < len(raw) && raw[i] == '-' {
		i++
	}
	digits := func() int {
		start := i
		for i < len(raw) && raw[i] >= '0' && raw[i] <= '9' {
			i++
		}
		return i - start
	}
	switch {
	case i < len(raw) && raw[i] == '0':
		i++
	case digits() == 0:
		return false
	}
	if i < len(raw) && raw[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(raw) && (raw[i] == 'e' || raw[i] == 'E') {
		i++
		if i < len(raw) && (raw[i] == '+' || raw[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(raw)
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
		at := pathAt{path, k, pathMember}
		if !ok {
			at.fault(errs, "The %s field is not a known field.")
			continue
		}
		if f.nonNull && bytes.Equal(bytes.TrimSpace(obj[k]), []byte("null")) {
			at.fault(errs, "The %s field must not be null.")
			continue
		}
		decodeValue(obj[k], v.FieldByIndex(f.index), at, errs)
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
	// b is encoding/json's own output: split it, rather than parse it again.
	merged, ok := splitObject(b)
	if !ok {
		return nil, fmt.Errorf("validate: merge base %T is not a JSON object", base)
	}
	for k, v := range patch {
		merged[k] = v
	}
	return merged, nil
}
