package data

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// The reference encodings: encoding/json by reflection, with the arrays and maps made
// non-nil as the hand-written encoders write them. Each level's reference uses the level
// below's MarshalJSON, which the test checks first.
type (
	refToolVariable   ToolVariable
	refTool           Tool
	refLLMConfig      LLMConfig
	refAnalysisField  AnalysisField
	refAnalysisConfig struct {
		Fields           []AnalysisField `json:"fields"`
		SuccessCriterion *string         `json:"success_criterion"`
		Summary          bool            `json:"summary"`
		Auto             bool            `json:"auto"`
	}
)

func refAnalysisFieldJSON(f AnalysisField) ([]byte, error) {
	p := refAnalysisField(f)
	p.Choices = orEmpty(p.Choices)
	return json.Marshal(p)
}

func refAnalysisJSON(c AnalysisConfig) ([]byte, error) {
	return json.Marshal(refAnalysisConfig{orEmpty(c.Fields), c.SuccessCriterion, c.Summary, c.Auto})
}

func randAnalysis(r *rand.Rand) AnalysisConfig {
	c := AnalysisConfig{SuccessCriterion: maybe(r, pick(r, awkward)), Summary: r.IntN(2) == 0, Auto: r.IntN(2) == 0}
	if r.IntN(4) > 0 {
		c.Fields = []AnalysisField{}
		for range r.IntN(4) {
			c.Fields = append(c.Fields, AnalysisField{pick(r, awkward), pick(r, awkward), pick(r, awkward), randStrings(r), r.IntN(2) == 0})
		}
	}
	return c
}

func refVariableJSON(v ToolVariable) ([]byte, error) {
	p := refToolVariable(v)
	p.Choices = orEmpty(p.Choices)
	return json.Marshal(p)
}

func refToolJSON(t Tool) ([]byte, error) {
	p := refTool(t)
	if p.CustomSIPHeaders == nil {
		p.CustomSIPHeaders = map[string]string{}
	}
	p.PhoneDirectory = orEmpty(p.PhoneDirectory)
	p.CustomFunctionHeaders = orEmpty(p.CustomFunctionHeaders)
	p.CustomFunctionQuery = orEmpty(p.CustomFunctionQuery)
	p.CustomFunctionVariables = orEmpty(p.CustomFunctionVariables)
	p.SpeakDuringExecutionOptions = orEmpty(p.SpeakDuringExecutionOptions)
	p.Variables = orEmpty(p.Variables)
	return json.Marshal(p)
}

func refLLMJSON(c LLMConfig) ([]byte, error) {
	p := refLLMConfig(c)
	p.KnowledgeBaseIDs = orEmpty(p.KnowledgeBaseIDs)
	p.Tools = orEmpty(p.Tools)
	return json.Marshal(p)
}

// strings that exercise every escape: controls, quotes, HTML, invalid UTF-8, U+2028/9.
var awkward = []string{"", "plain", "a\"b\\c", "<script>&amp;</script>", "\x00\x01\b\f\n\r\t\x1f", "caf\xc3", "\xff\xfe",
	"line\u2028sep\u2029", "日本語 ✓", "\x7f", "ends with \xe2\x82"}

// awkward floats: both sides of the exponent cutoffs, negative zero, the largest.
var floats = []float64{0, math.Copysign(0, -1), 0.5, 1e-6, 9.99e-7, 1e-7, 1e20, 1e21, 123456789.125, -3.25e-9, math.MaxFloat64, 2}

func pick[T any](r *rand.Rand, list []T) T { return list[r.IntN(len(list))] }

func maybe[T any](r *rand.Rand, v T) *T {
	if r.IntN(3) == 0 {
		return nil
	}
	return &v
}

func randStrings(r *rand.Rand) []string {
	switch r.IntN(3) {
	case 0:
		return nil
	case 1:
		return []string{}
	}
	out := make([]string, 1+r.IntN(3))
	for i := range out {
		out[i] = pick(r, awkward)
	}
	return out
}

func randTool(r *rand.Rand) *Tool {
	if r.IntN(8) == 0 {
		return nil
	}
	t := &Tool{Name: pick(r, awkward), Type: pick(r, awkward), Description: maybe(r, pick(r, awkward)),
		AnnouncementType: maybe(r, pick(r, awkward)), AnnouncementMessage: maybe(r, pick(r, awkward)),
		AnnouncementPrompt: maybe(r, pick(r, awkward)), TransferDeclinedMessage: maybe(r, pick(r, awkward)),
		HoldAudio: maybe(r, pick(r, awkward)), VoicemailDetection: maybe(r, r.IntN(2) == 0),
		VoicemailResponseActionType: maybe(r, pick(r, awkward)), VoicemailResponseText: maybe(r, pick(r, awkward)),
		PauseDetectionDelayMS: maybe(r, r.IntN(100000)-50), ContentType: pick(r, awkward), Content: pick(r, awkward),
		HTTPMethod: pick(r, awkward), APIEndpoint: pick(r, awkward), Timeout: maybe(r, r.IntN(10000)),
		CustomFunctionHeaders: randStrings(r), CustomFunctionQuery: randStrings(r),
		CustomFunctionParameters: maybe(r, pick(r, awkward)), CustomFunctionVariables: randStrings(r),
		SpeakDuringExecution: maybe(r, true), SpeakDuringExecutionOptions: randStrings(r), SpeakAfterExecution: maybe(r, false)}
	if r.IntN(3) > 0 {
		t.CustomSIPHeaders = map[string]string{}
		for range r.IntN(4) {
			t.CustomSIPHeaders[pick(r, awkward)] = pick(r, awkward)
		}
	}
	for range r.IntN(3) {
		t.PhoneDirectory = append(t.PhoneDirectory, PhoneDirectoryEntry{pick(r, awkward), pick(r, awkward), pick(r, awkward), pick(r, awkward)})
	}
	for range r.IntN(3) {
		t.Variables = append(t.Variables, ToolVariable{pick(r, awkward), pick(r, awkward), pick(r, awkward), randStrings(r)})
	}
	return t
}

func randAgent(r *rand.Rand) *StoredAgent {
	a := &StoredAgent{Agent: Agent{ID: pick(r, awkward), WorkspaceID: pick(r, awkward), Name: pick(r, awkward), Status: pick(r, awkward),
		PublishedVersion: maybe(r, r.IntN(50)), AgentConfig: DefaultAgentConfig()}, LastVersion: r.IntN(50)}
	if r.IntN(2) == 0 {
		a.CreatedAt = NewTime(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(r.Int64N(1 << 50))))
		a.UpdatedAt = a.CreatedAt
		a.PublishedAt = maybe(r, a.CreatedAt)
	}
	c := &a.LLMConfig
	c.Provider, c.Model, c.Deployment, c.Endpoint = pick(r, awkward), pick(r, awkward), pick(r, awkward), pick(r, awkward)
	c.APIVersion, c.BaseURL, c.Region = pick(r, awkward), pick(r, awkward), pick(r, awkward)
	c.Temperature, c.MaxTokens, c.APIKey = maybe(r, pick(r, floats)), maybe(r, r.IntN(1<<20)), maybe(r, pick(r, awkward))
	c.KnowledgeBaseIDs = randStrings(r)
	c.Tools = nil
	if r.IntN(4) > 0 {
		c.Tools = []*Tool{}
		for range r.IntN(6) {
			c.Tools = append(c.Tools, randTool(r))
		}
	}
	a.KnowledgeBaseConfig.SimilarityThreshold = maybe(r, pick(r, floats))
	a.PromptConfig.Prompt = pick(r, awkward)
	a.AnalysisConfig = randAnalysis(r)
	return a
}

func TestAgentJSONMatchesReflection(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 17))
	same := func(what string, got []byte, gotErr error, want []byte, wantErr error) {
		t.Helper()
		if gotErr != nil || wantErr != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s:\n got %s (%v)\nwant %s (%v)", what, got, gotErr, want, wantErr)
		}
	}
	for range 3000 {
		a := randAgent(r)
		for _, tool := range a.LLMConfig.Tools {
			if tool == nil {
				continue
			}
			for _, v := range tool.Variables {
				got, gotErr := v.MarshalJSON()
				want, wantErr := refVariableJSON(v)
				same("tool variable", got, gotErr, want, wantErr)
			}
			got, gotErr := tool.MarshalJSON()
			want, wantErr := refToolJSON(*tool)
			same("tool", got, gotErr, want, wantErr)
		}
		got, gotErr := a.LLMConfig.MarshalJSON()
		want, wantErr := refLLMJSON(a.LLMConfig)
		same("llm_config", got, gotErr, want, wantErr)
		for _, f := range a.AnalysisConfig.Fields {
			got, gotErr = f.MarshalJSON()
			want, wantErr = refAnalysisFieldJSON(f)
			same("analysis field", got, gotErr, want, wantErr)
		}
		got, gotErr = a.AnalysisConfig.MarshalJSON()
		want, wantErr = refAnalysisJSON(a.AnalysisConfig)
		same("analysis_config", got, gotErr, want, wantErr)
		got, gotErr = a.Agent.AppendJSON([]byte("prefix"))
		want, wantErr = json.Marshal(&a.Agent)
		same("agent", got[len("prefix"):], gotErr, want, wantErr)
		got, gotErr = a.AppendJSON(nil)
		want, wantErr = json.Marshal(a)
		same("stored agent", got, gotErr, want, wantErr)
	}
}

func TestAgentJSONRefusesNaN(t *testing.T) {
	a := Agent{AgentConfig: DefaultAgentConfig()}
	nan := math.NaN()
	a.LLMConfig.Temperature = &nan
	if _, err := a.AppendJSON(nil); err == nil {
		t.Fatal("NaN encoded")
	}
	if _, err := json.Marshal(&a); err == nil {
		t.Fatal("json.Marshal encoded NaN")
	}
}

func TestEventJSONMatchesReflection(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 17))
	for i := range 2000 {
		a := randAgent(r)
		payload, _ := json.Marshal(a)
		if i%5 == 0 {
			payload = nil // no payload: null
		}
		e := Event{ID: pick(r, awkward), Type: pick(r, awkward), WorkspaceID: pick(r, awkward), Data: payload,
			PrevHash: pick(r, awkward), Hash: pick(r, awkward),
			Actor: Actor{Type: pick(r, awkward), UserID: pick(r, awkward), TokenID: int64(r.IntN(3)) - 1, Address: pick(r, awkward)}}
		if i%2 == 0 {
			e.CreatedAt = a.CreatedAt
		}
		want, err := json.Marshal(&e)
		if got := e.AppendJSON(nil, true); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("event:\n got %s\nwant %s (%v)", got, want, err)
		}
		noHash := e.AppendJSON(nil, false)
		if !bytes.HasPrefix(want, noHash[:len(noHash)-1]) {
			t.Fatalf("event without hash:\n got %s\nwant a prefix of %s", noHash, want)
		}
	}
}
