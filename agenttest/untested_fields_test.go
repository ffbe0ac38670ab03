package agenttest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/voiceapi/voiceapi/data"
)

// TestUntestedFieldsAreInvisible: a configuration that differs from another only in
// data.UntestedFields (the fields the publish gate's draft revision leaves out) makes the
// same requests to the model, byte for byte, and the same result: no test can tell the
// two apart, so a run of one is a run of the other.
func TestUntestedFieldsAreInvisible(t *testing.T) {
	run := func(change func(c *data.AgentConfig)) ([][]byte, []byte) {
		r, stand := restaurant(t)
		change(&r.Config)
		res, err := r.Run(context.Background(), scriptedTest(), 1)
		if err != nil {
			t.Fatal(err)
		}
		var bodies [][]byte
		for _, req := range stand.Requests() {
			bodies = append(bodies, req.Body)
		}
		res.Latency = data.TestLatency{} // measured on the wall clock: the one thing that differs
		for i := range res.Transcript {
			res.Transcript[i].LatencyMS = nil
		}
		out, _ := json.Marshal(res)
		return bodies, out
	}
	plainBodies, plainResult := run(func(*data.AgentConfig) {})
	voice, wait, criterion := "another-voice", 9.0, "The caller booked."
	otherBodies, otherResult := run(func(c *data.AgentConfig) {
		c.CallConfig = data.CallConfig{MaxCallDurationMS: 60_000, RingDurationMS: 5_000}
		c.STTConfig = data.STTConfig{Provider: data.STTAssemblyAI, Model: "best"}
		c.TTSConfig = data.TTSConfig{Provider: data.TTSCartesia, Model: "sonic", VoiceID: &voice}
		c.PromptConfig.AISpeakAfterSilence, c.PromptConfig.AISpeakWaitTime = true, &wait
		c.AnalysisConfig = data.AnalysisConfig{SuccessCriterion: &criterion, Summary: true, Auto: true,
			Fields: []data.AnalysisField{{Name: "people", Type: "number", Description: "How many"}}}
	})
	if len(plainBodies) == 0 || len(plainBodies) != len(otherBodies) {
		t.Fatalf("%d requests, then %d", len(plainBodies), len(otherBodies))
	}
	for i := range plainBodies {
		if !bytes.Equal(plainBodies[i], otherBodies[i]) {
			t.Errorf("request %d differs:\n%s\n%s", i, plainBodies[i], otherBodies[i])
		}
	}
	if !bytes.Equal(plainResult, otherResult) {
		t.Errorf("results differ:\n%s\n%s", plainResult, otherResult)
	}
}
