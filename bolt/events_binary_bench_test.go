package bolt

import (
	"testing"

	"github.com/voiceapi/voiceapi/data"
)

// BenchmarkEventForms: encoding (inside the group commit) and decoding an event of the
// bench seeder's shape, in the JSON forms of schema 3 and in the binary form: whole (the
// call as payload) and as a reference to its call.
func BenchmarkEventForms(b *testing.B) {
	ids := testIDs()
	e := baseEvent(ids, callPayload(b))
	callID := ids.New(data.PrefixCall)
	forms := []struct {
		name   string
		encode func() []byte
	}{
		{"whole/json", func() []byte { return encodeValue(e.AppendJSON(make([]byte, 0, len(e.Data)+512), true)) }},
		{"whole/binary", func() []byte { return storeEvent(e) }},
		{"callref/json", func() []byte { return encodeRef(markCallRef, callID, e) }},
		{"callref/binary", func() []byte { return storeRef(markCallRef, callID, e) }},
	}
	for _, f := range forms {
		stored := f.encode()
		b.Run("encode/"+f.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				f.encode()
			}
			b.ReportMetric(float64(len(stored)), "stored-bytes")
		})
		b.Run("decode/"+f.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := parseEvent(e.ID, stored); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
