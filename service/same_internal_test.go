package service

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/voiceapi/voiceapi/data"
)

// sameSnapshot agrees with comparing the encoded snapshots, on the cases where a walk
// could go wrong: nil against empty, a field deep in a tool, the sign of a zero.
func TestSameSnapshotAgreesWithTheEncoding(t *testing.T) {
	base := func() data.AgentSnapshot {
		a := data.DefaultAgent()
		desc := "Ends the call."
		a.LLMConfig.Tools = []*data.Tool{{Name: "end", Type: data.ToolEndCall, Description: &desc}, nil}
		return a.Snapshot()
	}
	cases := map[string]func(*data.AgentSnapshot){
		"unchanged":            func(*data.AgentSnapshot) {},
		"name":                 func(s *data.AgentSnapshot) { s.Name = "Other" },
		"nil tools":            func(s *data.AgentSnapshot) { s.LLMConfig.Tools = nil },
		"empty tools":          func(s *data.AgentSnapshot) { s.LLMConfig.Tools = []*data.Tool{} },
		"nil kb ids":           func(s *data.AgentSnapshot) { s.LLMConfig.KnowledgeBaseIDs = nil },
		"empty kb ids":         func(s *data.AgentSnapshot) { s.LLMConfig.KnowledgeBaseIDs = []string{} },
		"tool description":     func(s *data.AgentSnapshot) { d := "Bye."; s.LLMConfig.Tools[0].Description = &d },
		"tool description nil": func(s *data.AgentSnapshot) { s.LLMConfig.Tools[0].Description = nil },
		"nil tool to a tool":   func(s *data.AgentSnapshot) { s.LLMConfig.Tools[1] = &data.Tool{Name: "x"} },
		"empty headers":        func(s *data.AgentSnapshot) { s.LLMConfig.Tools[0].CustomSIPHeaders = map[string]string{} },
		"a header":             func(s *data.AgentSnapshot) { s.LLMConfig.Tools[0].CustomSIPHeaders = map[string]string{"X": "1"} },
		"negative zero":        func(s *data.AgentSnapshot) { z := math.Copysign(0, -1); s.KnowledgeBaseConfig.SimilarityThreshold = &z },
		"ring":                 func(s *data.AgentSnapshot) { s.CallConfig.RingDurationMS++ },
	}
	for name, change := range cases {
		a, b := base(), base()
		change(&b)
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if want, got := string(ja) == string(jb), sameSnapshot(a, b); got != want {
			t.Errorf("%s: sameSnapshot %v, encodings equal %v", name, got, want)
		}
		if want, got := string(ja) == string(jb), sameSnapshot(b, a); got != want {
			t.Errorf("%s, swapped: sameSnapshot %v, encodings equal %v", name, got, want)
		}
	}
}
