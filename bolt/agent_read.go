package bolt

import "github.com/voiceapi/voiceapi/data"

// Agent implements service.AgentReadTx: the stored agent, its api_key sealed.
func (t tx) Agent(id string) (*data.Agent, error) {
	var row agentRow
	found, err := getJSON(t.b.Bucket(bucketAgents), []byte(id), &row)
	if err != nil || !found {
		return nil, err
	}
	return &row.Agent, nil
}
