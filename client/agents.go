package client

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/url"
	"strconv"

	"github.com/voiceapi/voiceapi/data"
)

// AgentsService calls the agent and agent version routes.
type AgentsService struct{ c *Client }

// AgentInput is the body of an agent create or update.
//
// The server merges each group a body gives into the stored group member by member (on
// create, into the defaults), and keeps the groups it does not give. AgentInput sends
// exactly that: Name when not nil, each typed group that is not nil as data encodes it
// (every member of the group type, as a response shows it, so an agent read, changed and
// sent back keeps what it had), and each group of Patch as the members its map holds and
// nothing else — the way to set a few members of a group without restating the rest,
// which is what plan and apply send. A group given both typed and in Patch is an error.
type AgentInput struct {
	Name                *string
	CallConfig          *data.CallConfig
	KnowledgeBaseConfig *data.KnowledgeBaseConfig
	LLMConfig           *data.LLMConfig
	PromptConfig        *data.PromptConfig
	STTConfig           *data.STTConfig
	TTSConfig           *data.TTSConfig
	AnalysisConfig      *data.AnalysisConfig
	// Patch holds groups by their JSON name (call_config, llm_config, ...) as partial
	// objects.
	Patch map[string]map[string]any
	// MaxConcurrentCalls, when set, sends max_concurrent_calls (nil sends null: no bound).
	MaxConcurrentCalls data.Opt[*int]
}

// AgentGroups are the JSON names of an agent's seven configuration groups.
var AgentGroups = []string{"call_config", "knowledge_base_config", "llm_config", "prompt_config", "stt_config", "tts_config", "analysis_config"}

// MarshalJSON writes the members the input sets.
func (in AgentInput) MarshalJSON() ([]byte, error) {
	out := map[string]any{}
	if in.Name != nil {
		out["name"] = *in.Name
	}
	typed := map[string]any{}
	add := func(name string, isNil bool, v any) {
		if !isNil {
			typed[name] = v
		}
	}
	add("call_config", in.CallConfig == nil, in.CallConfig)
	add("knowledge_base_config", in.KnowledgeBaseConfig == nil, in.KnowledgeBaseConfig)
	add("llm_config", in.LLMConfig == nil, in.LLMConfig)
	add("prompt_config", in.PromptConfig == nil, in.PromptConfig)
	add("stt_config", in.STTConfig == nil, in.STTConfig)
	add("tts_config", in.TTSConfig == nil, in.TTSConfig)
	add("analysis_config", in.AnalysisConfig == nil, in.AnalysisConfig)
	for k, v := range typed {
		out[k] = v
	}
	if in.MaxConcurrentCalls.Set {
		out["max_concurrent_calls"] = in.MaxConcurrentCalls.V
	}
	for k, v := range in.Patch {
		if _, dup := typed[k]; dup {
			return nil, fmt.Errorf("client: the agent group %s is given both typed and in Patch", k)
		}
		out[k] = v
	}
	return json.Marshal(out)
}

// AgentFilter narrows a list of agents; Status "" lists every status, Name "" every name
// (else the agents whose name contains it, ignoring case), KnowledgeBaseID "" every agent
// (else those using that knowledge base, by their configuration or a stored version).
type AgentFilter struct {
	Status          string
	Name            string
	KnowledgeBaseID string
}

func (f AgentFilter) query() url.Values {
	q := url.Values{}
	if f.Status != "" {
		q.Set("status", f.Status)
	}
	if f.Name != "" {
		q.Set("name", f.Name)
	}
	if f.KnowledgeBaseID != "" {
		q.Set("knowledge_base_id", f.KnowledgeBaseID)
	}
	return q
}

// List returns one page of agents, newest first.
func (s *AgentsService) List(ctx context.Context, f AgentFilter, p data.PageRequest, opts ...RequestOption) ([]*data.Agent, data.Page, error) {
	res, err := s.c.do(ctx, request{op: "agentList", query: pageQuery(f.query(), p), opts: opts})
	if err != nil {
		return nil, data.Page{}, err
	}
	return list[data.Agent](res)
}

// All iterates over every agent the filter selects.
func (s *AgentsService) All(ctx context.Context, f AgentFilter, opts ...RequestOption) iter.Seq2[*data.Agent, error] {
	return all(ctx, s.c, func(ctx context.Context, p data.PageRequest) ([]*data.Agent, data.Page, error) {
		return s.List(ctx, f, p, opts...)
	})
}

// Create creates a draft agent; groups not given get their defaults.
func (s *AgentsService) Create(ctx context.Context, in AgentInput, opts ...RequestOption) (*data.Agent, string, error) {
	return sendRecord[data.Agent](ctx, s.c, "agentCreate", nil, in, opts)
}

// Get returns an agent and its ETag.
func (s *AgentsService) Get(ctx context.Context, id string, opts ...RequestOption) (*data.Agent, string, error) {
	return getRecord[data.Agent](ctx, s.c, "agentShow", []string{id}, opts)
}

// Update merges in into the agent; a change makes it a draft.
func (s *AgentsService) Update(ctx context.Context, id string, in AgentInput, opts ...RequestOption) (*data.Agent, string, error) {
	return sendRecord[data.Agent](ctx, s.c, "agentUpdate", []string{id}, in, opts)
}

// Delete removes the agent and its versions.
func (s *AgentsService) Delete(ctx context.Context, id string, opts ...RequestOption) error {
	return s.c.noContent(ctx, "agentDelete", []string{id}, nil, opts)
}

// Publish stores the agent's configuration as its next version; description may be nil.
// An agent with required tests publishes only once a run of its draft passed them (409
// tests_required or tests_failed otherwise).
func (s *AgentsService) Publish(ctx context.Context, id string, description *string, opts ...RequestOption) error {
	return s.c.noContent(ctx, "agentPublish", []string{id}, map[string]*string{"description": description}, opts)
}

// PublishForce publishes past the agent's required tests: owners and admins only,
// audited as agent.published_untested.
func (s *AgentsService) PublishForce(ctx context.Context, id string, description *string, opts ...RequestOption) error {
	return s.c.noContent(ctx, "agentPublish", []string{id}, map[string]any{"description": description, "force": true}, opts)
}

// ListVersions returns one page of the agent's versions, newest first.
func (s *AgentsService) ListVersions(ctx context.Context, id string, p data.PageRequest, opts ...RequestOption) ([]*data.AgentVersion, data.Page, error) {
	res, err := s.c.do(ctx, request{op: "agentVersionList", pathArgs: []string{id}, query: pageQuery(nil, p), opts: opts})
	if err != nil {
		return nil, data.Page{}, err
	}
	return list[data.AgentVersion](res)
}

// AllVersions iterates over every version of the agent.
func (s *AgentsService) AllVersions(ctx context.Context, id string, opts ...RequestOption) iter.Seq2[*data.AgentVersion, error] {
	return all(ctx, s.c, func(ctx context.Context, p data.PageRequest) ([]*data.AgentVersion, data.Page, error) {
		return s.ListVersions(ctx, id, p, opts...)
	})
}

// GetVersion returns one version of the agent.
func (s *AgentsService) GetVersion(ctx context.Context, id string, number int, opts ...RequestOption) (*data.AgentVersion, string, error) {
	return getRecord[data.AgentVersion](ctx, s.c, "agentVersionShow", []string{id, strconv.Itoa(number)}, opts)
}

// RestoreVersion makes a version live again and returns the agent.
func (s *AgentsService) RestoreVersion(ctx context.Context, id string, number int, opts ...RequestOption) (*data.Agent, string, error) {
	return sendRecord[data.Agent](ctx, s.c, "agentVersionRestore", []string{id, strconv.Itoa(number)}, nil, opts)
}

// DeleteVersion deletes a version nothing runs on: 409 conflict while it is the published
// version, a variant of the rollout, or an open call or conversation runs on it. Its
// number is never given again.
func (s *AgentsService) DeleteVersion(ctx context.Context, id string, number int, opts ...RequestOption) error {
	return s.c.noContent(ctx, "agentVersionDelete", []string{id, strconv.Itoa(number)}, nil, opts)
}

// DiffVersions lists the fields changed from version a to version b, or to the current
// agent when b is 0.
func (s *AgentsService) DiffVersions(ctx context.Context, id string, a, b int, opts ...RequestOption) ([]data.Change, error) {
	other := "current"
	if b != 0 {
		other = strconv.Itoa(b)
	}
	var out []data.Change
	err := s.c.dataOf(ctx, request{op: "agentVersionDiff", pathArgs: []string{id, strconv.Itoa(a), other}, opts: opts}, &out)
	return out, err
}

// QueryKnowledge retrieves chunks from the agent's knowledge bases with its
// knowledge_base_config.
func (s *AgentsService) QueryKnowledge(ctx context.Context, id string, q data.AgentKnowledgeQuery, opts ...RequestOption) ([]data.KnowledgeChunk, error) {
	body, err := jsonBody(q)
	if err != nil {
		return nil, err
	}
	var out []data.KnowledgeChunk
	err = s.c.dataOf(ctx, request{op: "agentKnowledgeQuery", pathArgs: []string{id}, body: body, contentType: "application/json", opts: opts}, &out)
	return out, err
}

// Catalog returns the models valid per provider.
func (s *AgentsService) Catalog(ctx context.Context, opts ...RequestOption) (*data.Catalog, error) {
	var out data.Catalog
	if err := s.c.dataOf(ctx, request{op: "catalog", opts: opts}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
