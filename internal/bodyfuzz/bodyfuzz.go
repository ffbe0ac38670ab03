// Package bodyfuzz is the harness the request body fuzz targets share (docs/reliability.md):
// a body goes through the server's decoding steps and the outcome must have the
// properties listed below.
package bodyfuzz

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/strictjson"
	"github.com/voiceapi/voiceapi/validate"
)

// A body goes through the same steps as in the server (decodeInput's Object and strict
// decode, then the service's rules combined with the decoder's faults: checkInput), and
// the outcome must have these properties:
//   - it is malformed_json (no fields to name) or validation_failed naming at least one
//     field, each with a message, each rooted at a member of the body or a field of the type;
//   - the same body gives the same result twice;
//   - an accepted body, encoded again from what was decoded, is accepted again and decodes
//     to the same value (what the server stores is what the client sent).

// decodeLike mirrors the server's decodeInput and the service's checkInput, and
// decodeBodyObject's presence flags through set.
func decodeLike[T any](body []byte, rules func(in *T, obj map[string]json.RawMessage) error) (*T, map[string]json.RawMessage, error) {
	in := new(T)
	obj, err := strictjson.Object(body)
	if err != nil {
		// A member name given twice is refused by name: the members, read as
		// encoding/json reads them, are what its path is rooted in.
		var members map[string]json.RawMessage
		if data.ErrorCode(err) == data.EINVALID && json.Unmarshal(body, &members) == nil {
			return in, members, err
		}
		return in, nil, err
	}
	var errs validate.Errors
	strictjson.StrictObject(obj, in, "", &errs)
	return in, obj, validate.Combine(errs.Err(), rules(in, obj))
}

// Check checks the properties above for one body; reencode turns an accepted value back
// into a body (PlainJSON when nil).
func Check[T any](t *testing.T, body []byte, rules func(in *T, obj map[string]json.RawMessage) error, reencode func(*T) []byte) {
	t.Helper()
	in, obj, err := decodeLike(body, rules)
	again, _, err2 := decodeLike(body, rules)
	if !reflect.DeepEqual(in, again) || !SameError(err, err2) {
		t.Fatalf("two decodes of one body differ: %v / %v", err, err2)
	}
	if err != nil {
		checkRejection(t, err, obj, reflect.TypeFor[T]())
		return
	}
	var b []byte
	if reencode != nil {
		b = reencode(in)
	} else {
		b = PlainJSON(in)
	}
	back, _, err := decodeLike(b, rules)
	if err != nil {
		t.Fatalf("accepted body %q, re-encoded as %s, is rejected: %v", body, b, fieldsOf(err))
	}
	if !reflect.DeepEqual(in, back) {
		t.Fatalf("accepted body %q decodes differently once re-encoded as %s:\n%#v\n%#v", body, b, in, back)
	}
}

// SameError reports whether two errors are the same to a client: message and fields.
func SameError(a, b error) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Error() == b.Error() && reflect.DeepEqual(fieldsOf(a), fieldsOf(b))
}

func fieldsOf(err error) map[string][]string {
	if e, ok := err.(*data.Error); ok {
		return e.Fields
	}
	return nil
}

// checkRejection asserts the shape of an error a client gets for a body.
func checkRejection(t *testing.T, err error, obj map[string]json.RawMessage, typ reflect.Type) {
	t.Helper()
	e, ok := err.(*data.Error)
	if !ok {
		t.Fatalf("error %T %v is not a *data.Error", err, err)
	}
	switch e.Code {
	case data.EMALFORMED:
		if obj != nil {
			t.Fatalf("malformed_json for a body that parsed as an object: %v", err)
		}
		return
	case data.EINVALID:
	default:
		t.Fatalf("a body's error is %s, want malformed_json or validation_failed: %v", e.Code, err)
	}
	if len(e.Fields) == 0 {
		t.Fatalf("validation_failed names no field: %v", err)
	}
	known := jsonNames(typ)
	for path, msgs := range e.Fields {
		if len(msgs) == 0 || msgs[0] == "" {
			t.Fatalf("fault on %q without a message", path)
		}
		if !rootedIn(path, obj, known) {
			t.Fatalf("fault on %q names neither a member of the body nor a field of %s", path, typ)
		}
	}
}

// rootedIn reports whether path is, or lies under, a member of the body or a field of the
// type. A member's name may itself hold dots, so roots are matched as prefixes.
func rootedIn(path string, obj map[string]json.RawMessage, known map[string]bool) bool {
	for k := range obj {
		if path == k || strings.HasPrefix(path, k+".") {
			return true
		}
	}
	root, _, _ := strings.Cut(path, ".")
	return known[root]
}

func jsonNames(t reflect.Type) map[string]bool {
	out := map[string]bool{}
	for _, f := range reflect.VisibleFields(t) {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.IsExported() && !f.Anonymous && name != "-" {
			if name == "" {
				name = f.Name
			}
			out[name] = true
		}
	}
	return out
}

var (
	marshalerT = reflect.TypeFor[json.Marshaler]()
	optionalT  = reflect.TypeFor[interface{ Optional() }]()
)

// PlainJSON encodes a decoded body the way a client would send it: an unset data.Opt is
// left out, a set one is its value, and an absent (nil) slice or strict:"nonnull" field is
// left out, since neither takes null.
func PlainJSON(v any) []byte {
	b, err := json.Marshal(plain(reflect.ValueOf(v)))
	if err != nil {
		panic(err)
	}
	return b
}

func plain(v reflect.Value) any {
	if !v.IsValid() {
		return nil
	}
	if v.Type().Implements(marshalerT) && v.Kind() != reflect.Pointer {
		return v.Interface()
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return plain(v.Elem())
	case reflect.Struct:
		m := map[string]any{}
		for _, f := range reflect.VisibleFields(v.Type()) {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if !f.IsExported() || f.Anonymous || name == "-" || f.Tag.Get("strict") == "readonly" {
				continue // a read-only member is never given
			}
			if name == "" {
				name = f.Name
			}
			fv := v.FieldByIndex(f.Index)
			switch {
			case fv.Type().Implements(optionalT):
				if fv.Field(0).Bool() {
					m[name] = plain(fv.Field(1))
				}
			case fv.Kind() == reflect.Slice && fv.IsNil():
			case f.Tag.Get("strict") == "nonnull" && fv.IsNil():
			default:
				m[name] = plain(fv)
			}
		}
		return m
	case reflect.Slice:
		out := make([]any, v.Len())
		for i := range out {
			out[i] = plain(v.Index(i))
		}
		return out
	case reflect.Map:
		if v.IsNil() {
			return nil
		}
		out := map[string]any{}
		for it := v.MapRange(); it.Next(); {
			out[it.Key().String()] = plain(it.Value())
		}
		return out
	default:
		return v.Interface()
	}
}

// AddSeeds adds bodies as seeds in code; testdata/fuzz/<FuzzName>/ holds more.
func AddSeeds(f *testing.F, bodies ...string) {
	for _, b := range bodies {
		f.Add([]byte(b))
	}
}
