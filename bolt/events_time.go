package bolt

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"time"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
)

// Time windows of events (schema 31). The chain is ordered by id, and an event's
// created_at is the clock when it was recorded, which can step back (an NTP correction):
// time is not provably in chain order, so a window cannot be found by a search of the
// chain. Each event is listed instead at its chain time, the latest created_at of it and
// every event before it in its workspace's chain, "<ws>\x00<chain time>\x00<id>": chain
// times never decrease along the chain, so this list is in chain order and a time seeks
// in it. Each workspace's clock entry keeps the chain time of its newest event and its
// lag, the most any event's created_at fell behind the chain time before it (0 while the
// clock never stepped back). Then an event created at or after from is at or past the
// first event whose chain time reaches from, and one created before to is before the
// first whose chain time reaches to + lag: a window's events lie between the two, and a
// walk of the chain seeks to them, not past every newer event.
var (
	bucketEventsByTime = []byte("events_by_time")
	bucketEventClocks  = []byte("event_clocks")
)

func init() { allBuckets = append(allBuckets, bucketEventsByTime, bucketEventClocks) }

// eventClock is a workspace's clock entry: chain time and lag in Unix milliseconds, the
// newest event's id, and whether an event was ever appended below it (out of id order:
// then the chain times are not in id order, and no walk seeks by them).
type eventClock struct {
	chainMS, lagMS int64
	unordered      bool
	last           string
}

func readEventClock(tx *bbolt.Tx, ws string) (eventClock, bool) {
	v := tx.Bucket(bucketEventClocks).Get([]byte(ws))
	if len(v) < 17 {
		return eventClock{}, false
	}
	return eventClock{
		chainMS:   int64(binary.BigEndian.Uint64(v)),
		lagMS:     int64(binary.BigEndian.Uint64(v[8:])),
		unordered: v[16] != 0,
		last:      string(v[17:]),
	}, true
}

func putEventClock(tx *bbolt.Tx, ws string, c eventClock) error {
	v := make([]byte, 17, 17+len(c.last))
	binary.BigEndian.PutUint64(v, uint64(c.chainMS))
	binary.BigEndian.PutUint64(v[8:], uint64(c.lagMS))
	if c.unordered {
		v[16] = 1
	}
	return tx.Bucket(bucketEventClocks).Put([]byte(ws), append(v, c.last...))
}

// chainTimeKey is the list's key of id at chain time ms (Unix milliseconds, sign bit flipped
// so that a time before 1970 sorts first); id "" is the least key of that time.
func chainTimeKey(ws string, ms int64, id string) []byte {
	k := make([]byte, 0, len(ws)+9+len(id))
	k = append(k, ws...)
	k = append(k, 0)
	k = binary.BigEndian.AppendUint64(k, uint64(ms)^1<<63)
	return append(k, id...)
}

// advance is c after an event created at createdMS with id: its chain time and lag.
func (c eventClock) advance(id string, createdMS int64, first bool) eventClock {
	switch {
	case first:
		c.chainMS = createdMS
	case id <= c.last:
		c.unordered = true
	case createdMS > c.chainMS:
		c.chainMS = createdMS
	default:
		c.lagMS = max(c.lagMS, c.chainMS-createdMS)
	}
	if first || id > c.last {
		c.last = id
	}
	return c
}

// indexEventTime lists a new event at its chain time and moves its workspace's clock, in
// the event's transaction.
func indexEventTime(tx *bbolt.Tx, e *data.Event) error {
	c, ok := readEventClock(tx, e.WorkspaceID)
	c = c.advance(e.ID, e.CreatedAt.UnixMilli(), !ok)
	b := tx.Bucket(bucketEventsByTime)
	b.FillPercent = appendOnlyFill
	if err := b.Put(chainTimeKey(e.WorkspaceID, c.chainMS, e.ID), nil); err != nil {
		return err
	}
	return putEventClock(tx, e.WorkspaceID, c)
}

// eventWindow returns the ids between which the workspace's events created in [from, to)
// lie (a zero bound is none): lo inclusive, hi exclusive, "" unbounded. none reports that
// no event can be in it. A workspace whose events came out of id order is not bounded.
func eventWindow(tx *bbolt.Tx, ws string, from, to time.Time) (lo, hi string, none bool) {
	if from.IsZero() && to.IsZero() {
		return "", "", false
	}
	c, ok := readEventClock(tx, ws)
	if !ok {
		// No event was listed since schema 31: none stored, as the migration lists all.
		return "", "", true
	}
	if c.unordered {
		return "", "", false
	}
	prefix := append([]byte(ws), 0)
	cur := tx.Bucket(bucketEventsByTime).Cursor()
	idAt := func(ms int64) (string, bool) {
		k, _ := cur.Seek(chainTimeKey(ws, ms, ""))
		if k == nil || !bytes.HasPrefix(k, prefix) || len(k) < len(prefix)+8 {
			return "", false
		}
		return string(k[len(prefix)+8:]), true
	}
	if !from.IsZero() {
		// created_at is whole milliseconds: at or after from is at or after from's
		// millisecond.
		id, ok := idAt(from.UnixMilli())
		if !ok {
			return "", "", true
		}
		lo = id
	}
	if !to.IsZero() {
		// Before to is at or before to's millisecond less one when to is whole, else
		// at or before to's: chain times up to that plus the lag.
		ms := to.UnixMilli()
		if to.Equal(time.UnixMilli(ms)) {
			ms--
		}
		if id, ok := idAt(ms + 1 + c.lagMS); ok {
			hi = id
		}
	}
	return lo, hi, lo != "" && hi != "" && lo >= hi
}

// deleteWorkspaceEventTimes removes a deleted workspace's list and clock.
func deleteWorkspaceEventTimes(tx *bbolt.Tx, ws string) error {
	if err := deletePrefix(tx.Bucket(bucketEventsByTime), append([]byte(ws), 0)); err != nil {
		return err
	}
	return tx.Bucket(bucketEventClocks).Delete([]byte(ws))
}

// listEventTimesOfStore fills the list and the clocks from the stored events (the schema
// 30 → 31 migration, in the transaction that raises the version), each workspace's events
// in id order, each event's header read once (storedEventFacets). An index entry without
// its event lists nothing.
func listEventTimesOfStore(tx *bbolt.Tx) error {
	var entries []indexEntry
	clocks := map[string]eventClock{}
	err := eachStoredEventHeader(tx, func(ws, id string, e *data.Event) error {
		clock, seen := clocks[ws]
		clock = clock.advance(id, e.CreatedAt.UnixMilli(), !seen)
		clocks[ws] = clock
		entries = append(entries, indexEntry{chainTimeKey(ws, clock.chainMS, id), nil})
		return nil
	})
	if err != nil {
		return err
	}
	if err := putSorted(tx.Bucket(bucketEventsByTime), entries); err != nil {
		return err
	}
	for ws, clock := range clocks {
		if err := putEventClock(tx, ws, clock); err != nil {
			return fmt.Errorf("workspace %s: %w", ws, err)
		}
	}
	return nil
}
