package strictjson

import (
	"github.com/voiceapi/voiceapi/data"
	"reflect"
	"testing"
)

// FuzzDecodeMatchesObject holds Decode, which splits a well-formed body in place, to
// the path through Object's map and StrictObject: the same value, the same error.
func FuzzDecodeMatchesObject(f *testing.F) {
	for _, s := range []string{
		`{}`, ``, `null`, `[]`, `{"int":1} {}`, `{"int":1,"int":"x"}`,
		`{"str":"a\u00e9\"b","ptrs":[null,{"name":"n"}],"map":{"k":"v"},"raw":{"x":[1]},"when":"2026-11-21T10:04:05Z"}`,
		`{"non_null":null,"inner":{"nope":1},"items":{},"float":1e400}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var got, want decTarget
		gotErr := Decode(body, &got)
		var wantErr error
		obj, dup, err := parseObject(body)
		if err != nil {
			wantErr = err
		} else {
			var errs faultList
			if dup != nil { // named first, then the rest as the map holds it
				p := dup.(*data.Error).FieldPaths()[0]
				errs.Add(p, dup.(*data.Error).Fields[p][0])
			}
			StrictObject(obj, &want, "", &errs)
			wantErr = errs.err()
		}
		if !reflect.DeepEqual(gotErr, wantErr) {
			t.Fatalf("%q: Decode %v, Object and StrictObject %v", body, gotErr, wantErr)
		}
		if wantErr == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: Decode %+v, Object and StrictObject %+v", body, got, want)
		}
	})
}
