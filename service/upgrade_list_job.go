package service

import (
	"context"

	"github.com/voiceapi/voiceapi/data"
)

// listedUpgrade is an upgrade's job over a list its storage upgrade filled per workspace
// (conversations to redact, agents to seal): one job a workspace whose list holds an id,
// working the list through RetentionBatch ids a read. An id leaves the list in the write
// that finishes it, so the list is the job's checkpoint and a run again after a crash
// starts where the last one stopped.
type listedUpgrade struct {
	name string
	list func(tx Tx, ws string, limit int) ([]string, error)
	each func(ctx context.Context, ws, id string) error
}

// listedUpgradeKind is the job kind of u, in module.
func (b *base) listedUpgradeKind(u listedUpgrade, module string) JobKind {
	return JobKind{Name: u.name, Module: module, EveryAgent: agentBound(module),
		Handle:  func(ctx context.Context, run *JobRun) error { return b.runListedUpgrade(ctx, run, u) },
		AtStart: func(ctx context.Context) error { return b.enqueueListedUpgrade(ctx, u) }}
}

// enqueueListedUpgrade queues u's job of each workspace whose list holds an id; a
// workspace's pending job is kept (the unique key), so every replica may run it.
func (b *base) enqueueListedUpgrade(ctx context.Context, u listedUpgrade) error {
	return b.store.Update(ctx, func(tx Tx) error {
		workspaces, err := tx.AllWorkspaces()
		if err != nil {
			return err
		}
		for _, w := range workspaces {
			ids, err := u.list(tx, w.ID, 1)
			if err != nil {
				return err
			}
			if len(ids) == 0 {
				continue
			}
			if _, err := b.enqueueJob(tx, data.JobEnqueue{WorkspaceID: w.ID, Kind: u.name, UniqueKey: u.name}); err != nil {
				return err
			}
		}
		return nil
	})
}

// runListedUpgrade works through the job's workspace's list, each id by u.each.
func (b *base) runListedUpgrade(ctx context.Context, run *JobRun, u listedUpgrade) error {
	ws := run.Job.WorkspaceID
	for {
		var ids []string
		err := b.store.View(ctx, func(tx Tx) (err error) {
			ids, err = u.list(tx, ws, RetentionBatch)
			return err
		})
		if err != nil {
			return err
		}
		if len(ids) == 0 {
			return nil
		}
		for _, id := range ids {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := u.each(ctx, ws, id); err != nil {
				return err
			}
		}
	}
}
