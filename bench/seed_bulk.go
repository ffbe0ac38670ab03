package main

import (
	"context"
	"time"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/fulltext"
	"github.com/voiceapi/voiceapi/internal/fakecalls"
	"github.com/voiceapi/voiceapi/postgres"
	"github.com/voiceapi/voiceapi/service"
)

// bulkBatch is how many calls one write transaction of seedBulk stores.
const bulkBatch = 2000

// seedBulk builds a data directory for read benchmarks (search, export) faster than
// seedOffline: the account and agents through the services, then the calls straight
// through the storage interface, bulkBatch per transaction, with the same records and
// the same stored derivations a registration writes (list indexes, rollups, minutes,
// search postings from fulltext.CallTerms) but no events, no webhook outbox and no
// per-call validation. Reads see the same indexes; the file is smaller by the events.
//
// With a databaseURL it seeds that (empty) PostgreSQL database instead, its secret key
// file in dir: serve it with --data dir --database-url URL. x adds the other records of
// a big workspace (seedExtras).
func seedBulk(dir, databaseURL string, agents, calls int, x extras, logf func(string, ...any)) (*state, error) {
	ctx := context.Background()
	var db cli.Backend
	var err error
	if databaseURL != "" {
		db, err = postgres.Open(ctx, postgres.Options{URL: databaseURL, DataDir: dir})
	} else {
		db, err = bolt.Open(dir, bolt.Options{})
	}
	if err != nil {
		return nil, err
	}
	defer db.Close()
	svc := cli.NewServices(db)
	seed, err := seedAccount(ctx, svc, agents, 1)
	if err != nil {
		return nil, err
	}
	st, ws, tmpl := seed.st, seed.ws, seed.call
	ids := db.ServiceOptions().IDs
	start := time.Now()
	for done := 0; done < calls; {
		n := min(bulkBatch, calls-done)
		err := db.Update(ctx, func(tx service.Tx) error {
			for i := done; i < done+n; i++ {
				id := ids.New(data.PrefixCall)
				at := data.NewTime(data.IDTime(data.PrefixCall, id))
				c := &data.Call{ID: id, WorkspaceID: ws, AgentID: st.Agents[i%len(st.Agents)],
					Direction: tmpl.Direction, FromNumber: tmpl.FromNumber, ToNumber: tmpl.ToNumber,
					Status: data.CallEnded, StartedAt: tmpl.StartedAt, EndedAt: tmpl.EndedAt, DurationMS: tmpl.DurationMS,
					DisconnectionReason: tmpl.DisconnectionReason, Transcript: fakecalls.Transcript(int64(i)),
					Variables: tmpl.Variables, Metadata: tmpl.Metadata, CreatedAt: at, UpdatedAt: at}
				if err := tx.InsertCall(c); err != nil {
					return err
				}
				if err := tx.SetCallTerms(ws, id, nil, fulltext.CallTerms(c)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if done/100_000 != (done+n)/100_000 {
			logf("  %d calls (%.0f/s)", done+n, float64(done+n)/time.Since(start).Seconds())
		}
		done += n
	}
	st.Calls = calls
	if err := seedExtras(ctx, svc, seed, x, logf); err != nil {
		return nil, err
	}
	return st, st.save(dir)
}
