package postgres

// Placeholders until the agents tables are written: this file goes when they come.

import (
	"context"
	"io"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

var (
	_ = context.Background
	_ io.Reader
	_ time.Time
	_ data.Event
	_ service.EventFilter
)

func (t *tx) Agent(id string) (*data.StoredAgent, error) { panic("postgres: not written yet") }
func (t *tx) AgentRevision(id string) (uint64, error)    { panic("postgres: not written yet") }
func (t *tx) PutAgent(a *data.StoredAgent, oldStatus string) error {
	panic("postgres: not written yet")
}
func (t *tx) DeleteAgent(a *data.StoredAgent) error { panic("postgres: not written yet") }
func (t *tx) AgentIDs(workspaceID, status string, only []string, nameContains string, req data.PageRequest) ([]string, data.Page, error) {
	panic("postgres: not written yet")
}
func (t *tx) PutAgentVersion(v *data.AgentVersion) error { panic("postgres: not written yet") }
func (t *tx) AgentVersion(agentID string, n int) (*data.AgentVersion, error) {
	panic("postgres: not written yet")
}
func (t *tx) AgentVersions(agentID string, req data.PageRequest) ([]*data.AgentVersion, data.Page, error) {
	panic("postgres: not written yet")
}
func (t *tx) KnowledgeBaseExists(workspaceID, id string) (bool, error) {
	panic("postgres: not written yet")
}
func (t *tx) Number(id string) (*data.Number, error) { panic("postgres: not written yet") }
func (t *tx) Numbers(workspaceID string, f data.NumberFilter, p data.PageRequest) ([]*data.Number, data.Page, error) {
	panic("postgres: not written yet")
}
func (t *tx) InsertNumber(n *data.Number) (bool, error)   { panic("postgres: not written yet") }
func (t *tx) PhoneNumberTaken(phone string) (bool, error) { panic("postgres: not written yet") }
func (t *tx) PutNumber(n *data.Number) error              { panic("postgres: not written yet") }
func (t *tx) DeleteNumber(id string) error                { panic("postgres: not written yet") }
func (t *tx) AgentRef(workspaceID, agentID string) (found bool, publishedVersion *int, err error) {
	panic("postgres: not written yet")
}
func (t *tx) Call(id string) (*data.Call, error) { panic("postgres: not written yet") }
func (t *tx) Calls(workspaceID string, agentIDs []string, f data.CallFilter, p data.PageRequest) ([]*data.Call, data.Page, error) {
	panic("postgres: not written yet")
}
func (t *tx) InsertCall(c *data.Call) error { panic("postgres: not written yet") }
func (t *tx) PutCall(c *data.Call) error    { panic("postgres: not written yet") }
func (t *tx) DeleteCall(id string) error    { panic("postgres: not written yet") }
func (t *tx) CallRollups(workspaceID, agentID string, from, to time.Time, step time.Duration) ([]data.CallBucket, error) {
	panic("postgres: not written yet")
}
func (t *tx) EndedCallMillisInMonth(workspaceID string, at time.Time) (int64, error) {
	panic("postgres: not written yet")
}
