package data

// SimulationModel is a workspace's simulation setting (conventions §22): the language
// model that plays the simulated callers of agent tests and judges their criteria. Its
// members are llm_config's provider members, with the same rules; a workspace without one
// uses each agent's own model. APIKey is a secret (conventions §9): sealed at rest,
// masked in responses, kept when the masked value is sent back.
type SimulationModel struct {
	Provider    string   `json:"provider"`
	Model       string   `json:"model,omitempty"`
	Temperature *float64 `json:"temperature,omitempty" strict:"nonnull"`
	Deployment  string   `json:"deployment,omitempty"`
	Endpoint    string   `json:"endpoint,omitempty"`
	APIVersion  string   `json:"api_version,omitempty"`
	BaseURL     string   `json:"base_url,omitempty"`
	APIKey      *string  `json:"api_key"`
	Region      string   `json:"region,omitempty"`
	MaxTokens   *int     `json:"max_tokens,omitempty" strict:"nonnull"`
}

// LLMConfig is the model as an llm_config without tools or knowledge: what the language
// model layer is built from.
func (m SimulationModel) LLMConfig() LLMConfig {
	return LLMConfig{Provider: m.Provider, Model: m.Model, Temperature: m.Temperature, Deployment: m.Deployment,
		Endpoint: m.Endpoint, APIVersion: m.APIVersion, BaseURL: m.BaseURL, APIKey: m.APIKey, Region: m.Region,
		MaxTokens: m.MaxTokens, KnowledgeBaseIDs: []string{}, Tools: []*Tool{}}
}

// SimulationOf is an agent's llm_config as a simulation setting: the default, each
// agent's own model.
func SimulationOf(c LLMConfig) SimulationModel {
	return SimulationModel{Provider: c.Provider, Model: c.Model, Temperature: c.Temperature, Deployment: c.Deployment,
		Endpoint: c.Endpoint, APIVersion: c.APIVersion, BaseURL: c.BaseURL, APIKey: c.APIKey, Region: c.Region,
		MaxTokens: c.MaxTokens}
}

// Masked returns a copy whose api_key shows only its mask.
func (m SimulationModel) Masked() SimulationModel {
	m.APIKey = maskPtr(m.APIKey)
	return m
}
