package client

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
)

// optional is implemented by data.Opt: an update body's member that is sent only when set.
type optional interface{ Optional() }

var optionalType = reflect.TypeFor[optional]()

// encodeBody is json.Marshal, except for the members of a struct body: a data.Opt field is
// written as its value when set and left out when not, and a nil slice or map is left out
// rather than sent as null, and so is a nil pointer tagged strict:"nonnull". data's body types (data.WebhookUpdate, ...) are the server's
// own, and this is how its strict decoder reads them: an absent member is "not given",
// while null is refused where the member is not nullable.
func encodeBody(v any) ([]byte, error) {
	if _, ok := v.(json.Marshaler); ok {
		return json.Marshal(v)
	}
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer && !rv.IsNil() {
		rv = rv.Elem()
	}
	if rv.Kind() != reflect.Struct {
		return json.Marshal(v)
	}
	var buf bytes.Buffer
	buf.WriteByte('{')
	first := true
	if err := encodeFields(&buf, rv, &first); err != nil {
		return nil, err
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// encodeFields writes the members of struct v, flattening embedded structs as
// encoding/json does.
func encodeFields(buf *bytes.Buffer, v reflect.Value, first *bool) error {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" && opts == "" || f.Tag.Get("strict") == "readonly" {
			continue // a record's read-only member (data.ReadOnly): never sent
		}
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			if err := encodeFields(buf, v.Field(i), first); err != nil {
				return err
			}
			continue
		}
		if name == "" {
			name = f.Name
		}
		fv := v.Field(i)
		if f.Type.Implements(optionalType) {
			if !fv.FieldByName("Set").Bool() {
				continue
			}
			fv = fv.FieldByName("V")
		} else if strings.Contains(opts, "omitempty") && fv.IsZero() {
			continue
		} else if (fv.Kind() == reflect.Slice || fv.Kind() == reflect.Map) && fv.IsNil() {
			continue
		} else if fv.Kind() == reflect.Pointer && fv.IsNil() && f.Tag.Get("strict") == "nonnull" {
			continue // optional but not nullable: absent, not null
		}
		val, err := json.Marshal(fv.Interface())
		if err != nil {
			return err
		}
		key, _ := json.Marshal(name)
		if !*first {
			buf.WriteByte(',')
		}
		*first = false
		buf.Write(key)
		buf.WriteByte(':')
		buf.Write(val)
	}
	return nil
}
