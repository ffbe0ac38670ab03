package service

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"

	"github.com/voiceapi/voiceapi/data"
)

// sameSnapshot reports whether two snapshots encode to the same JSON: whether an update
// changes anything. Encoding both was a sixth of a full-body PUT's CPU; sameEncoding walks
// them instead.
func sameSnapshot(a, b data.AgentSnapshot) bool {
	return sameEncoding(reflect.ValueOf(a), reflect.ValueOf(b))
}

// plainMarshalers are the types whose MarshalJSON only writes nil slices and maps as []
// and {}, which sameEncoding does anyway; any other json.Marshaler is compared encoded.
var plainMarshalers = map[reflect.Type]bool{
	reflect.TypeFor[data.LLMConfig]():    true,
	reflect.TypeFor[data.Tool]():         true,
	reflect.TypeFor[data.ToolVariable](): true,
}

var marshalerType = reflect.TypeFor[json.Marshaler]()

// sameEncoding reports whether json.Marshal would give a and b the same bytes, for the
// plain data of agent records: a nil slice or map is the same as an empty one (the
// records' MarshalJSON methods write both as [] or {}), and -0 is not 0.
func sameEncoding(a, b reflect.Value) bool {
	t := a.Type()
	if (t.Implements(marshalerType) || reflect.PointerTo(t).Implements(marshalerType)) && !plainMarshalers[t] && t.Kind() != reflect.Pointer {
		ja, errA := json.Marshal(a.Interface())
		jb, errB := json.Marshal(b.Interface())
		return errA == nil && errB == nil && string(ja) == string(jb)
	}
	switch t.Kind() {
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() || strings.HasPrefix(f.Tag.Get("json"), "-") {
				continue
			}
			if !sameEncoding(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		if t.Kind() == reflect.Interface {
			ja, errA := json.Marshal(a.Interface())
			jb, errB := json.Marshal(b.Interface())
			return errA == nil && errB == nil && string(ja) == string(jb)
		}
		return sameEncoding(a.Elem(), b.Elem())
	case reflect.Slice, reflect.Array:
		if a.Len() != b.Len() {
			return false
		}
		for i := range a.Len() {
			if !sameEncoding(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Map:
		if a.Len() != b.Len() {
			return false
		}
		for _, k := range a.MapKeys() {
			bv := b.MapIndex(k)
			if !bv.IsValid() || !sameEncoding(a.MapIndex(k), bv) {
				return false
			}
		}
		return true
	case reflect.String:
		return a.String() == b.String()
	case reflect.Bool:
		return a.Bool() == b.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return a.Int() == b.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return a.Uint() == b.Uint()
	case reflect.Float32, reflect.Float64:
		return a.Float() == b.Float() && math.Signbit(a.Float()) == math.Signbit(b.Float())
	}
	ja, errA := json.Marshal(a.Interface())
	jb, errB := json.Marshal(b.Interface())
	return errA == nil && errB == nil && string(ja) == string(jb)
}
