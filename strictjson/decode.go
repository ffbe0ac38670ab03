package strictjson

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
// could not be read at all, so there are no fields to name. A member name given twice in
// any object of the body is validation_failed (422) naming its path: see parseObject.
func Object(body []byte) (map[string]json.RawMessage, error) {
	obj, dup, err := parseObject(body)
	if err != nil {
		return nil, err
	}
	if dup != nil {
		return nil, dup
	}
	return obj, nil
}

// parseObject is Object, with a duplicated member name reported apart (dup) from a body that
// could not be read (err): Decode still decodes the rest of such a body, so one 422 names
// every fault.
func parseObject(body []byte) (obj map[string]json.RawMessage, dup, err error) {
	body = trimJSONSpace(body)
	if len(body) == 0 {
		return map[string]json.RawMessage{}, nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&obj); err != nil || obj == nil {
		if err == nil || strings.Contains(err.Error(), "cannot unmarshal") {
			return nil, nil, data.Errorf(data.EMALFORMED, "The request body must be a JSON object.")
		}
		return nil, nil, data.Errorf(data.EMALFORMED, "The request body is not valid JSON: %v.", err)
	}
	// More misses a stray closing bracket after the object; Valid does not.
	if dec.More() || !json.Valid(body) {
		return nil, nil, data.Errorf(data.EMALFORMED, "The request body must hold one JSON object and nothing after it.")
	}
	// encoding/json keeps the last of a name given twice; I-JSON (RFC 7493 §2.3) forbids
	// such objects, as two readers may take different ones.
	if path, nul, ok := duplicateMember(body); ok {
		if nul {
			return obj, data.FieldError(path, nulMessage(path)), nil
		}
		return obj, data.FieldError(path, duplicateMessage(path)), nil
	}
	return obj, nil, nil
}

// trimJSONSpace drops the white space JSON allows around a value (RFC 8259 §2: space,
// tab, CR, LF) and no other: bytes.TrimSpace also drops a form feed, a vertical tab, NEL
// and a no-break space, which made a body that encoding/json refuses pass as one object.
func trimJSONSpace(b []byte) []byte { return bytes.Trim(b, " \t\r\n") }

// duplicateMessage is the fault of a member name given twice.
func duplicateMessage(path string) string {
	return fmt.Sprintf("The %s field is given more than once.", path)
}

// Faults receives what a decode finds wrong, each message under its dot path (as
// validate.Errors does).
type Faults interface {
	Add(path, msg string)
}

// bounded is Faults that keeps only so many (data.Faults): past that, a fault is counted.
type bounded interface {
	Full() bool
	Omit(n int)
}

// faultList is the Faults of Decode: the faults in the order found, bounded as every
// validation error's (data.Faults).
type faultList struct{ data.Faults }

// err returns nil without faults, else one validation_failed error naming them all.
func (f *faultList) err() error { return f.Err() }

// Decode reads body strictly into dst, a pointer to a struct: see Strict. Faults come
// back as one validation_failed error naming every field.
//
// A well-formed object is split in place rather than through Object's map, and its
// strings share one copy of the body (see decoder.src): a map of members and a string
// per value were most of a full agent body's allocations.
func Decode(body []byte, dst any) error {
	var errs faultList
	b := trimJSONSpace(body)
	_, _, dup := duplicateMember(b)
	if len(b) == 0 || b[0] != '{' || dup || !json.Valid(b) {
		// The error says what is wrong (an empty body is {}). A duplicated name is named
		// first and the rest decoded as encoding/json reads it (the last value of the
		// name), so one 422 names every fault.
		obj, dupErr, err := parseObject(body)
		if err != nil {
			return err
		}
		if e, ok := dupErr.(*data.Error); ok {
			for _, p := range e.FieldPaths() {
				for _, m := range e.Fields[p] {
					errs.Add(p, m)
				}
			}
		}
		StrictObject(obj, dst, "", &errs)
		return errs.err()
	}
	ms, ok := scanObject(b, make([]member, 0, 16))
	if !ok {
		return data.Errorf(data.EMALFORMED, "The request body must be a JSON object.")
	}
	d := newDecoder("", &errs)
	d.src = b
	v := reflect.ValueOf(dst).Elem()
	decodeMembers(d, sortMembers(ms), v, fieldsOf(v.Type()), false)
	return errs.err()
}

// StrictObject decodes the members of obj into the struct dst points to, as Strict does.
func StrictObject(obj map[string]json.RawMessage, dst any, path string, errs Faults) {
	ms := make([]member, 0, len(obj))
	for k, raw := range obj {
		ms = append(ms, member{[]byte(k), raw})
	}
	slices.SortFunc(ms, func(x, y member) int { return bytes.Compare(x.key, y.key) })
	v := reflect.ValueOf(dst).Elem()
	decodeMembers(newDecoder(path, errs), ms, v, fieldsOf(v.Type()), false)
}

// Strict decodes raw into dst (a pointer) and records, under dot paths, every member the
// type does not know (conventions §1), every value of the wrong JSON type, and every null
// given for a field that is not nullable. Nullable fields are pointers, maps or
// json.RawMessage; slices and structs are not nullable. A struct field tagged
// strict:"nonnull" is not nullable either: it is a pointer or map only so that its
// absence can be told from its zero value.
//
// raw must be valid JSON (as Object or encoding/json has checked it): the splitter skips
// over values rather than validating them.
func Strict(raw json.RawMessage, dst any, path string, errs Faults) {
	decodeValue(newDecoder(path, errs), raw, reflect.ValueOf(dst).Elem())
}

var (
	rawMessageType = reflect.TypeFor[json.RawMessage]()
	stringType     = reflect.TypeFor[string]()
	unmarshalerT   = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalT = reflect.TypeFor[encoding.TextUnmarshaler]()
	optionalT      = reflect.TypeFor[interface{ Optional() }]()
)

// typeTraits are the interface checks decodeValue makes on a type, cached: reflect's
// Implements was a visible share of a body's decode.
// For a struct, fields is fieldsOf, looked up with the traits.
type typeTraits struct {
	optional, unmarshaler, textUnmarshaler bool
	fields                                 map[string]fieldInfo
}

var traitCache sync.Map // reflect.Type → typeTraits

func traitsOf(t reflect.Type) typeTraits {
	// Predeclared types (string, int, ...) and unnamed slices, maps and pointers have no
	// methods, nor do pointers to them: the cache's lookup was a visible share of a decode.
	if k := t.Kind(); t.PkgPath() == "" && k != reflect.Struct && k != reflect.Interface {
		return typeTraits{}
	}
	if tr, ok := traitCache.Load(t); ok {
		return tr.(typeTraits)
	}
	pt := reflect.PointerTo(t)
	tr := typeTraits{optional: t.Implements(optionalT), unmarshaler: pt.Implements(unmarshalerT), textUnmarshaler: pt.Implements(textUnmarshalT)}
	if t.Kind() == reflect.Struct {
		tr.fields = fieldsOf(t)
	}
	traitCache.Store(t, tr)
	return tr
}

func decodeValue(d *decoder, raw []byte, v reflect.Value) {
	t := v.Type()
	if t == rawMessageType {
		v.SetBytes(append([]byte(nil), raw...))
		return
	}
	b := trim(raw)
	isNull := string(b) == "null"
	if t.Kind() == reflect.Pointer {
		decodePointer(d, b, v, t, isNull)
		return
	}
	if isNull {
		decodeNull(d, b, v, t)
		return
	}
	traits := traitsOf(t)
	if traits.optional {
		// data.Opt: decode into V, mark Set.
		decodeValue(d, b, v.Field(1))
		v.Field(0).SetBool(true)
		return
	}
	if traits.unmarshaler {
		if err := v.Addr().Interface().(json.Unmarshaler).UnmarshalJSON(raw); err != nil {
			d.fault("The %s field is invalid: %v.", err)
		}
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		decodeStruct(d, b, v, traits.fields)
	case reflect.Slice:
		decodeSlice(d, b, v)
	case reflect.Map:
		decodeMap(d, b, v)
	case reflect.String:
		decodeString(d, b, v, traits.textUnmarshaler)
	case reflect.Bool:
		decodeBool(d, b, v)
	case reflect.Int, reflect.Int32, reflect.Int64:
		decodeInt(d, b, v)
	case reflect.Float32, reflect.Float64:
		decodeFloat(d, b, v)
	case reflect.Interface:
		decodeInterface(d, b, v)
	default:
		panic(fmt.Sprintf("validate: cannot decode into %s", t))
	}
}

// decodePointer decodes b, trimmed, into a new value for the pointer v, of type t, to
// point at; null makes v nil.
func decodePointer(d *decoder, b []byte, v reflect.Value, t reflect.Type, isNull bool) {
	if isNull {
		v.SetZero()
		return
	}
	var elem reflect.Value
	if t.Elem() == stringType {
		elem = reflect.ValueOf(d.newString())
	} else {
		elem = reflect.New(t.Elem())
	}
	decodeValue(d, b, elem.Elem())
	v.Set(elem)
}

// decodeNull decodes null (b) into v, of type t, which is not a pointer: a map or an
// interface becomes nil, a data.Opt is given null, anything else refuses it.
func decodeNull(d *decoder, b []byte, v reflect.Value, t reflect.Type) {
	if t.Kind() == reflect.Map || t.Kind() == reflect.Interface {
		v.SetZero()
		return
	}
	if t.Kind() == reflect.Struct && traitsOf(t).optional {
		// data.Opt given as null: V decides. A pointer V takes it (Opt[*T] tells a
		// given null from an absent member); any other V refuses it.
		decodeValue(d, b, v.Field(1))
		v.Field(0).SetBool(true)
		return
	}
	d.fault("The %s field must not be null.")
}

// decodeString decodes the JSON string b into v, through its UnmarshalText when it has one
// (text).
func decodeString(d *decoder, b []byte, v reflect.Value, text bool) {
	s, ok := unquoteBytes(b)
	if !ok {
		d.fault("The %s field must be a string.")
		return
	}
	if text {
		if err := v.Addr().Interface().(encoding.TextUnmarshaler).UnmarshalText(s); err != nil {
			d.fault("The %s field is invalid: %v.", err)
		}
		return
	}
	v.SetString(d.str(s))
}

// decodeBool decodes true or false (b) into v.
func decodeBool(d *decoder, b []byte, v reflect.Value) {
	switch string(b) {
	case "true":
		v.SetBool(true)
	case "false":
		v.SetBool(false)
	default:
		d.fault("The %s field must be true or false.")
	}
}

// decodeInt decodes the JSON number b into the integer v: a whole number written with a
// fraction or an exponent is one, up to 2^53 in size.
func decodeInt(d *decoder, b []byte, v reflect.Value) {
	if !data.IsJSONNumber(string(b)) {
		d.fault("The %s field must be an integer.")
		return
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		fl, ferr := strconv.ParseFloat(string(b), 64)
		if ferr != nil || fl != math.Trunc(fl) || math.Abs(fl) > 1<<53 {
			d.fault("The %s field must be an integer.")
			return
		}
		n = int64(fl)
	}
	if v.OverflowInt(n) {
		d.fault("The %s field is out of range.")
		return
	}
	v.SetInt(n)
}

// decodeFloat decodes the JSON number b into v.
func decodeFloat(d *decoder, b []byte, v reflect.Value) {
	f, err := strconv.ParseFloat(string(b), 64)
	if !data.IsJSONNumber(string(b)) || err != nil {
		d.fault("The %s field must be a number.")
		return
	}
	v.SetFloat(f)
}

// decodeInterface decodes any JSON value b into the interface v, as encoding/json does
// but with numbers as json.Number: a number a user wrote (a default variable, metadata)
// keeps its text, where float64 would turn 12345678901234567890 into ...7000.
func decodeInterface(d *decoder, b []byte, v reflect.Value) {
	var x any
	if err := data.DecodeJSON(b, &x); err != nil {
		d.fault("The %s field is invalid.")
		return
	}
	if !data.NumbersFit(x) {
		// What the float64 decoding refused (1e400) or rounded to 0 (1e-400), and what a
		// store could not keep as written, stays refused.
		d.fault("The %s field holds a number out of range: each must be 0 or between 5e-324 and 1.7976931348623157e308 in size (a 64-bit float), its exponent written in at most 3 digits.")
		return
	}
	v.Set(reflect.ValueOf(x))
}

// decodeStruct decodes the JSON object b into the struct v. Its members are collected on
// the stack: a map of them was a large share of a body's allocations.
func decodeStruct(d *decoder, b []byte, v reflect.Value, fields map[string]fieldInfo) {
	var buf [32]member
	ms, ok := scanObject(b, buf[:0])
	if !ok {
		d.fault("The %s field must be an object.")
		return
	}
	decodeMembers(d, sortMembers(ms), v, fields, false)
}

// decodeSlice decodes the JSON array b into the slice v.
func decodeSlice(d *decoder, b []byte, v reflect.Value) {
	var buf [32][]byte
	items, ok := scanArray(b, buf[:0])
	if !ok {
		d.fault("The %s field must be an array.")
		return
	}
	t := v.Type()
	s := reflect.MakeSlice(t, len(items), len(items))
	// Items that are pointers point into one array, made with the slice.
	var backing reflect.Value
	if et := t.Elem(); et.Kind() == reflect.Pointer && len(items) > 1 {
		backing = reflect.MakeSlice(reflect.SliceOf(et.Elem()), len(items), len(items))
	}
	for i, item := range items {
		d.pushIndex(i)
		if backing.IsValid() && string(item) != "null" {
			// As decodeValue does for a pointer, with the new value in the array.
			elem := backing.Index(i)
			decodeValue(d, item, elem)
			s.Index(i).Set(elem.Addr())
		} else {
			decodeValue(d, item, s.Index(i))
		}
		d.pop()
	}
	v.Set(s)
}

// decodeMap decodes the JSON object b into the map v, whose keys are strings.
func decodeMap(d *decoder, b []byte, v reflect.Value) {
	t := v.Type()
	var buf [16]member
	ms, ok := scanObject(b, buf[:0])
	if !ok || t.Key().Kind() != reflect.String {
		d.fault("The %s field must be an object.")
		return
	}
	ms = sortMembers(ms)
	m := reflect.MakeMapWithSize(t, len(ms))
	for _, mb := range ms {
		elem := reflect.New(t.Elem()).Elem()
		d.pushKey(mb.key)
		decodeValue(d, mb.raw, elem)
		d.pop()
		m.SetMapIndex(reflect.ValueOf(d.str(mb.key)).Convert(t.Key()), elem)
	}
	v.Set(m)
}

// decoder is the state of one strict decode: where faults go, and the dot path of the
// value being decoded, kept as a stack of member names and item indexes and joined only
// when a fault needs it (building every value's path up front was a large share of a
// body's allocations).
type decoder struct {
	errs Faults
	base string // the path of the value decoded
	path []pathElem

	// src, when set, holds every value decoded, and text is src as a string, made at the
	// first string value: a string without escapes is then a substring of text rather
	// than an allocation of its own. The strings of a group so share (and keep alive)
	// one copy of the group's bytes, which are little more than its strings.
	src  []byte
	text string
	// strs backs the *string values decoded, a slab at a time.
	strs []string
}

// str returns s, the bytes of a string value, as a string.
func (d *decoder) str(s []byte) string {
	if len(s) == 0 || d.src == nil {
		return string(s)
	}
	if off := cap(d.src) - cap(s); off >= 0 && off+len(s) <= len(d.src) && &d.src[off] == &s[0] {
		if d.text == "" {
			d.text = string(d.src)
		}
		return d.text[off : off+len(s)]
	}
	return string(s)
}

// newString returns a pointer to a new string variable, from the slab.
func (d *decoder) newString() *string {
	if len(d.strs) == cap(d.strs) {
		d.strs = make([]string, 0, 16)
	}
	d.strs = d.strs[:len(d.strs)+1]
	return &d.strs[len(d.strs)-1]
}

type pathElem struct {
	key   []byte // a member name, or nil for an item
	index int
	item  bool
}

func newDecoder(path string, errs Faults) *decoder {
	return &decoder{errs: errs, base: path, path: make([]pathElem, 0, 8)}
}

func (d *decoder) pushKey(key []byte) { d.path = append(d.path, pathElem{key: key}) }
func (d *decoder) pushIndex(i int)    { d.path = append(d.path, pathElem{index: i, item: true}) }
func (d *decoder) pop()               { d.path = d.path[:len(d.path)-1] }

// at returns the dot path of the value being decoded.
func (d *decoder) at() string {
	s := d.base
	for _, e := range d.path {
		if e.item {
			s = s + "." + strconv.Itoa(e.index)
		} else if s == "" {
			s = string(e.key)
		} else {
			s = s + "." + string(e.key)
		}
	}
	return s
}

// fault records a message whose first verb is the path itself.
func (d *decoder) fault(format string, args ...any) {
	if f, ok := d.errs.(bounded); ok && f.Full() {
		f.Omit(1) // counted without building its path or message
		return
	}
	s := d.at()
	d.errs.Add(s, fmt.Sprintf(format, append([]any{s}, args...)...))
}

// decodeMembers decodes ms, sorted by key without duplicates, into the struct v. With
// zeroFirst, each field given is reset before it is decoded, so that v (a stored group
// being merged) ends as if decoded afresh from its own members overlaid with ms.
func decodeMembers(d *decoder, ms []member, v reflect.Value, fields map[string]fieldInfo, zeroFirst bool) {
	for i := range ms {
		m := &ms[i]
		d.pushKey(m.key)
		f, ok := fields[string(m.key)]
		switch {
		case !ok:
			d.fault("The %s field is not a known field.")
		case f.readOnly:
			d.fault("The %s field is read-only.")
		case f.nonNull && string(trim(m.raw)) == "null":
			if zeroFirst {
				v.FieldByIndex(f.index).SetZero()
			}
			d.fault("The %s field must not be null.")
		default:
			fv := v.FieldByIndex(f.index)
			if zeroFirst {
				fv.SetZero()
			}
			decodeValue(d, m.raw, fv)
		}
		d.pop()
	}
	if !zeroFirst {
		missingRequired(d, ms, v.Type())
	}
}
