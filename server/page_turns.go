package server

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"runtime"

	"github.com/voiceapi/voiceapi/data"
)

// pageTurns lets at most GOMAXPROCS heavy pages (a page of 100 calls: 100 records
// inflated, decoded and encoded again, about 90 KB; a page of 100 agents, each with its
// whole configuration) be assembled at once; the others wait for their turn in arrival
// order (a channel's senders queue first come, first served). Assembled all at once, 32
// such pages shared two cores in whatever order the scheduler and the collector left
// them, and the slowest hundredth took 4-5 times the median; taking turns, each page runs
// to its end and its latency is mostly the queue ahead of it, alike for every request
// (docs/performance.md, "Tail latency").
//
// Only the assembly takes a turn: the encoded body is written after the turn is given
// back, so a client that reads slowly holds up no one else.
//
// A page yields the processor once it has its turn. Giving a turn back readies the next
// waiter in the releasing processor's next slot, so pages ran one after another while
// the goroutines the network poller had readied (new requests, not yet queued for a
// turn) waited in the global run queue, checked every 61st schedule: wrk saw a p99 2.5-3.5
// times the median, while the handlers themselves took at most 1.3-1.9 times it. Behind
// them in that queue, a page starts after the requests that arrived before it, and wrk's
// p99 came within 1.3-1.4 times the median (docs/performance.md, "Tail latency").
type pageTurns chan struct{}

func newPageTurns() pageTurns { return make(pageTurns, runtime.GOMAXPROCS(0)) }

// take waits for a turn; it returns a function that gives the turn back, or an error
// when ctx ends first (the client left, or the request ran out of time).
func (t pageTurns) take(ctx context.Context) (func(), error) {
	select {
	case t <- struct{}{}:
		runtime.Gosched()
		return func() { <-t }, nil
	case <-ctx.Done():
		return nil, data.Errorf(data.EUNAVAILABLE, "The server is busy; retry the request.")
	}
}

// encodeList encodes a list response ({"data": items, "meta": page} and a newline, the
// bytes writeList sends) into a pooled buffer, which sendJSON gives back.
func encodeList[T any](items []T, page data.Page) (*bytes.Buffer, error) {
	if items == nil {
		items = []T{}
	}
	buf := responseBufs.Get().(*bytes.Buffer)
	buf.Reset()
	if err := json.NewEncoder(buf).Encode(listBody[T]{Data: items, Meta: page}); err != nil {
		putResponseBuf(buf)
		return nil, err
	}
	return buf, nil
}

// sendJSON writes a 200 with the encoded body buf and gives buf back to the pool.
func sendJSON(w http.ResponseWriter, buf *bytes.Buffer) {
	defer putResponseBuf(buf)
	sendBody(w, buf.Bytes())
}
