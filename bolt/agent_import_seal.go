package bolt

import (
	"fmt"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
)

// The workspace export and import read and write agents whole, with their versions; until
// they move to the service layer they seal and open credentials themselves.

func (db *DB) unsealConfig(c *data.AgentConfig) error {
	if c.LLMConfig.APIKey == nil {
		return nil
	}
	plain, err := db.sealer.Open(*c.LLMConfig.APIKey)
	if err != nil {
		return fmt.Errorf("opening llm_config.api_key: %w", err)
	}
	c.LLMConfig.APIKey = &plain
	return nil
}

// sealedConfig returns a copy of c whose api_key is sealed for storage.
func (db *DB) sealedConfig(c data.AgentConfig) (data.AgentConfig, error) {
	if c.LLMConfig.APIKey == nil {
		return c, nil
	}
	sealed, err := db.sealer.Seal(*c.LLMConfig.APIKey)
	if err != nil {
		return c, err
	}
	c.LLMConfig.APIKey = &sealed
	return c, nil
}

// putPlainAgentRow stores row, whose api_key is plain in memory, sealed.
func (db *DB) putPlainAgentRow(tx *bbolt.Tx, row *agentRow, oldStatus string) error {
	stored := *row
	cfg, err := db.sealedConfig(row.AgentConfig)
	if err != nil {
		return err
	}
	stored.AgentConfig = cfg
	return putAgentRow(tx, &stored, oldStatus)
}

func masked(row *agentRow) *data.Agent {
	a := row.Agent.Masked()
	return &a
}
