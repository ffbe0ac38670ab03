package strictjson_test

import (
	"encoding/json"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/bodyfuzz"
)

// fuzzNested and fuzzDoc exercise every shape the strict decoder handles: nested objects,
// slices of pointers, data.Opt, maps, nullable and strict:"nonnull" pointers, timestamps,
// and free JSON.
type fuzzNested struct {
	Label  string   `json:"label"`
	Weight float64  `json:"weight"`
	Count  int      `json:"count"`
	Tags   []string `json:"tags"`
	Note   *string  `json:"note"`
	Keep   *bool    `json:"keep" strict:"nonnull"`
}

type fuzzDoc struct {
	Name    string                 `json:"name"`
	Small   int32                  `json:"small"`
	Big     int64                  `json:"big"`
	Flag    bool                   `json:"flag"`
	Ratio   *float64               `json:"ratio"`
	Inner   fuzzNested             `json:"inner"`
	Maybe   *fuzzNested            `json:"maybe"`
	Items   []*fuzzNested          `json:"items"`
	Opt     data.Opt[string]       `json:"opt"`
	OptList data.Opt[[]fuzzNested] `json:"opt_list"`
	Labels  map[string]string      `json:"labels"`
	Extra   map[string]any         `json:"extra"`
	When    *data.Time             `json:"when"`
	Any     any                    `json:"any"`
}

// FuzzStrictDecode: strictjson.Object and StrictObject on arbitrary bytes never panic, name
// every fault under a path rooted in the body, are deterministic, and what they accept
// survives a round trip.
func FuzzStrictDecode(f *testing.F) {
	bodyfuzz.AddSeeds(f,
		`{}`,
		`{"name":"n","small":1,"big":9007199254740993,"flag":true,"ratio":0.5,"inner":{"label":"l","tags":["a"],"keep":false},"maybe":null,"items":[null,{"count":2e0}],"opt":"x","opt_list":[{}],"labels":{"k":"v"},"extra":{"a":[1,{"b":null}]},"when":"2026-11-21T10:04:05.123456Z","any":[true]}`,
		`{"small":2147483648,"inner":{"keep":null},"opt":null,"items":{},"labels":{"k":null},"when":"yesterday","Name":"case"}`,
	)
	f.Fuzz(func(t *testing.T, body []byte) {
		bodyfuzz.Check(t, body, func(in *fuzzDoc, obj map[string]json.RawMessage) error {
			return nil
		}, nil)
	})
}
