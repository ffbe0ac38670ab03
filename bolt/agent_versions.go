package bolt

import (
	"context"
	"strconv"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

// PublishAgent implements data.AgentService: version N+1 snapshots name and every group.
func (db *DB) PublishAgent(ctx context.Context, id string, description *string) error {
	var errs validate.Errors
	validate.ValidatePublish(description, &errs)
	if err := errs.Err(); err != nil {
		return err
	}
	p := data.PrincipalFrom(ctx)
	return db.update(func(tx *bbolt.Tx) error {
		row, err := db.loadAgentRow(ctx, tx, id)
		if err != nil {
			return err
		}
		if err := data.CheckIfMatch(data.IfMatch(ctx), masked(row)); err != nil {
			return err
		}
		now := db.timeNow()
		n := row.LastVersion + 1
		cfg, err := db.sealedConfig(row.AgentConfig)
		if err != nil {
			return err
		}
		v := versionRow{data.AgentVersion{
			AgentID: id, VersionNumber: n, Description: description, Name: row.Name,
			AgentConfig: cfg, CreatedAt: now, PublishedBy: p.UserID,
		}}
		if err := putJSON(tx.Bucket(bucketAgentVersions), versionKey(id, n), v); err != nil {
			return err
		}
		oldStatus := row.Status
		row.LastVersion, row.Status, row.PublishedVersion = n, data.AgentStatusPublished, &n
		row.PublishedAt, row.UpdatedAt = &now, now
		if err := db.putAgentRow(tx, row, oldStatus); err != nil {
			return err
		}
		_, err = db.recordEvent(ctx, tx, data.EventAgentPublished, row.WorkspaceID, masked(row))
		return err
	})
}

// loadVersion reads version n of a visible agent, api_key unsealed.
func (db *DB) loadVersion(ctx context.Context, tx *bbolt.Tx, agentID string, n int) (*data.AgentVersion, error) {
	if _, err := db.loadAgentRow(ctx, tx, agentID); err != nil {
		return nil, err
	}
	var v versionRow
	found, err := getJSON(tx.Bucket(bucketAgentVersions), versionKey(agentID, n), &v)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, data.NotFound("Agent version")
	}
	if err := db.unsealConfig(&v.AgentConfig); err != nil {
		return nil, err
	}
	return &v.AgentVersion, nil
}

// ListAgentVersions implements data.AgentService.
func (db *DB) ListAgentVersions(ctx context.Context, agentID string, req data.PageRequest) ([]*data.AgentVersion, data.Page, error) {
	var list []*data.AgentVersion
	var page data.Page
	err := db.view(func(tx *bbolt.Tx) error {
		if _, err := db.loadAgentRow(ctx, tx, agentID); err != nil {
			return err
		}
		keys, pg, err := db.page(tx, bucketAgentVersions, agentID, req)
		if err != nil {
			return err
		}
		page = pg
		list = make([]*data.AgentVersion, 0, len(keys))
		for _, k := range keys {
			n, _ := strconv.Atoi(k)
			v, err := db.loadVersion(ctx, tx, agentID, n)
			if err != nil {
				return err
			}
			m := v.Masked()
			list = append(list, &m)
		}
		return nil
	})
	return list, page, err
}

// AgentVersion implements data.AgentService.
func (db *DB) AgentVersion(ctx context.Context, agentID string, n int) (*data.AgentVersion, error) {
	var out *data.AgentVersion
	err := db.view(func(tx *bbolt.Tx) error {
		v, err := db.loadVersion(ctx, tx, agentID, n)
		if err == nil {
			m := v.Masked()
			out = &m
		}
		return err
	})
	return out, err
}

// RestoreAgentVersion implements data.AgentService: the version's snapshot becomes the
// live configuration, published, without creating a version.
func (db *DB) RestoreAgentVersion(ctx context.Context, agentID string, n int) (*data.Agent, error) {
	var out *data.Agent
	err := db.update(func(tx *bbolt.Tx) error {
		row, err := db.loadAgentRow(ctx, tx, agentID)
		if err != nil {
			return err
		}
		if err := data.CheckIfMatch(data.IfMatch(ctx), masked(row)); err != nil {
			return err
		}
		v, err := db.loadVersion(ctx, tx, agentID, n)
		if err != nil {
			return err
		}
		now := db.timeNow()
		oldStatus := row.Status
		row.Name, row.AgentConfig = v.Name, v.AgentConfig
		row.Status, row.PublishedVersion, row.PublishedAt, row.UpdatedAt = data.AgentStatusPublished, &n, &now, now
		// Knowledge bases deleted since the version was published stay out.
		row.LLMConfig.KnowledgeBaseIDs = slicesFilter(row.LLMConfig.KnowledgeBaseIDs, func(id string) bool {
			return knowledgeBaseInWorkspace(tx, row.WorkspaceID, id)
		})
		if err := db.putAgentRow(tx, row, oldStatus); err != nil {
			return err
		}
		out = masked(row)
		_, err = db.recordEvent(ctx, tx, data.EventAgentRestored, row.WorkspaceID, out)
		return err
	})
	return out, err
}

func slicesFilter(s []string, keep func(string) bool) []string {
	out := make([]string, 0, len(s))
	for _, v := range s {
		if keep(v) {
			out = append(out, v)
		}
	}
	return out
}

// DiffAgentVersions implements data.AgentService; credentials are masked by the diff.
func (db *DB) DiffAgentVersions(ctx context.Context, agentID string, a int, b *int) ([]data.Change, error) {
	var changes []data.Change
	err := db.view(func(tx *bbolt.Tx) error {
		from, err := db.loadVersion(ctx, tx, agentID, a)
		if err != nil {
			return err
		}
		var to data.AgentSnapshot
		if b == nil {
			row, err := db.loadAgentRow(ctx, tx, agentID)
			if err != nil {
				return err
			}
			to = row.Snapshot()
		} else {
			v, err := db.loadVersion(ctx, tx, agentID, *b)
			if err != nil {
				return err
			}
			to = v.Snapshot()
		}
		changes = data.DiffAgentConfig(from.Snapshot(), to)
		return nil
	})
	return changes, err
}
