package bolt

import (
	"encoding/json"
	"fmt"
	"strconv"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
)

// An agent row is the agent's response encoding (data.StoredAgent.JSON: the agent
// masked, the bytes the service also sends, records in the event and hashes for the
// ETag) with three members added at its end:
//
//	{...the agent masked...,"row":2,"last_version":N,"api_key_sealed":"…"|null}
//
// so a write encodes the agent once. The row stays one JSON object whose top-level
// members are the agent's, so readers of a member or two (workspace_id, name) decode it
// as any record. Rows written before (no "row" member) hold the sealed key in
// llm_config.api_key; both read back the same.
const agentRowFormat = 2

// agentRowJSON is what decodes a row of either form. Its prompt_config, the one member
// holding a free-form value (default_variables), decodes through data.PromptConfigRow,
// so the row takes json.Unmarshal rather than the Decoder's copy (data.DecodeJSON).
type agentRowJSON struct {
	data.StoredAgent
	Row          int                  `json:"row"`
	APIKeySealed *string              `json:"api_key_sealed"`
	PromptConfig data.PromptConfigRow `json:"prompt_config"`
}

// encodeAgentRow returns the JSON to store for a (api_key sealed).
func encodeAgentRow(a *data.StoredAgent) ([]byte, error) {
	masked := a.JSON
	if masked == nil {
		// No response encoding given: encode the row without its key, which goes beside.
		c := a.Agent
		c.LLMConfig.APIKey = nil
		var err error
		if masked, err = c.AppendJSON(make([]byte, 0, 4096)); err != nil {
			return nil, err
		}
	}
	if len(masked) < 2 || masked[len(masked)-1] != '}' {
		return nil, fmt.Errorf("agent %s: its JSON is not an object", a.ID)
	}
	raw := make([]byte, 0, len(masked)+96)
	raw = append(raw, masked[:len(masked)-1]...)
	raw = append(raw, `,"row":`...)
	raw = strconv.AppendInt(raw, agentRowFormat, 10)
	raw = append(raw, `,"last_version":`...)
	raw = strconv.AppendInt(raw, int64(a.LastVersion), 10)
	raw = append(raw, `,"api_key_sealed":`...)
	if a.LLMConfig.APIKey == nil {
		raw = append(raw, "null"...)
	} else {
		key, err := json.Marshal(*a.LLMConfig.APIKey)
		if err != nil {
			return nil, err
		}
		raw = append(raw, key...)
	}
	return append(raw, '}'), nil
}

// getAgentRow reads the agent id as stored (api_key sealed); nil when there is none.
func getAgentRow(b *bbolt.Bucket, id string) (*data.StoredAgent, error) {
	var row agentRowJSON
	row.PromptConfig.Into = &row.StoredAgent.PromptConfig
	found, err := getJSON(b, []byte(id), &row)
	if err != nil {
		return nil, fmt.Errorf("decoding agent %s: %w", id, err)
	}
	if !found {
		return nil, nil
	}
	if row.Row >= agentRowFormat {
		row.LLMConfig.APIKey = row.APIKeySealed
	}
	return &row.StoredAgent, nil
}
