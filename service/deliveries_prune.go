package service

import (
	"context"
	"time"
)

// DeliveryPruneBatch bounds the delivery records one pruning transaction deletes, so a
// pass over a large backlog is many short transactions that writers interleave with,
// never one long one that holds them up.
const DeliveryPruneBatch = 256

// DefaultDeliveryRetention is how long finished delivery records are kept by default
// (`voiceapi serve --delivery-retention`): long enough to look into a receiver's outage
// after a holiday, short enough that a busy webhook's history does not grow without end.
const DefaultDeliveryRetention = 30 * 24 * time.Hour

// PruneDeliveries deletes, in one transaction, up to DeliveryPruneBatch finished delivery
// records (succeeded, failed or retrying; never a pending one) made more than retention
// ago by the service's clock, oldest first, and returns how many it deleted: the caller
// runs it again while it returns DeliveryPruneBatch. A retention of 0 or less keeps every
// record (it deletes nothing).
//
// Only delivery records go: the events they delivered stay, because the audit log and its
// hash chain are made of them (a gap would break the chain's verification) and replay
// re-sends from them; events have no retention of their own. The outbox needs no pruning:
// the fan-out takes each event off it.
func (s *DeliveryService) PruneDeliveries(ctx context.Context, retention time.Duration) (int, error) {
	if retention <= 0 {
		return 0, nil
	}
	before := s.now().Add(-retention)
	n := 0
	err := s.store.Update(ctx, func(tx Tx) error {
		var err error
		n, err = tx.PruneDeliveries(before, DeliveryPruneBatch)
		return err
	})
	return n, err
}
