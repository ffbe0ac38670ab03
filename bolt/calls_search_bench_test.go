package bolt

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"go.etcd.io/bbolt"
	"golang.org/x/crypto/bcrypt"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/fulltext"
)

// benchWords draws transcripts from a vocabulary with a Zipf skew, like speech.
func benchTranscript(r *rand.Rand, z *rand.Zipf) []data.TranscriptItem {
	words := strings.Fields(`the i to you a and my it is that for on can of have in be this me what with your we
		do at so just not are was but get like will would please yes no okay thanks help need want know call about
		order account appointment book schedule cancel refund payment card charge bill invoice plan subscription
		delivery shipping package tracking address change email phone password reset problem issue error agent
		manager monday tuesday friday morning week month tomorrow insurance claim doctor restaurant flight hotel`)
	out := make([]data.TranscriptItem, 8)
	for i := range out {
		w := make([]string, 12)
		for j := range w {
			if r.IntN(50) == 0 {
				w[j] = strings.Repeat("x", 1+r.IntN(3)) + string(rune('a'+r.IntN(26))) + string(rune('a'+r.IntN(26)))
			} else {
				w[j] = words[z.Uint64()%uint64(len(words))]
			}
		}
		out[i] = data.TranscriptItem{Role: "user", Content: strings.Join(w, " ")}
	}
	return out
}

// BenchmarkCallInsertSearchIndex is the write cost of the search index: one call with
// an eight-line transcript stored in its own transaction (fsync off) into a database of
// 20,000 calls, without and with its postings (about 40 distinct terms).
func BenchmarkCallInsertSearchIndex(b *testing.B) {
	db, err := Open(b.TempDir(), Options{PasswordCost: bcrypt.MinCost, NoSync: true, SecretKey: make([]byte, 32)})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	r := rand.New(rand.NewPCG(1, 2))
	z := rand.NewZipf(r, 1.07, 2, 200)
	agent := db.ids.New(data.PrefixAgent)
	newCall := func() *data.Call {
		id := db.ids.New(data.PrefixCall)
		at := data.NewTime(data.IDTime(data.PrefixCall, id))
		return &data.Call{ID: id, WorkspaceID: "ws_bench", AgentID: agent, Direction: data.DirectionWeb, Status: data.CallEnded,
			Transcript: benchTranscript(r, z), Variables: map[string]any{}, Metadata: map[string]any{}, CreatedAt: at, UpdatedAt: at}
	}
	store := func(tx *bbolt.Tx, c *data.Call, terms bool) error {
		if err := insertCall(tx, c); err != nil {
			return err
		}
		if terms {
			return setCallTerms(tx, c.WorkspaceID, c.ID, nil, fulltext.CallTerms(c))
		}
		return nil
	}
	for range 20 {
		if err := db.update(func(tx *bbolt.Tx) error {
			for range 1000 {
				if err := store(tx, newCall(), true); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			b.Fatal(err)
		}
	}
	// One call per transaction, and 64 (what the group commit gathers from concurrent
	// writers): a shared transaction shares the pages of the common terms.
	for _, batch := range []int{1, 64} {
		for _, terms := range []bool{false, true} {
			name := "call"
			if terms {
				name = "call+postings"
			}
			b.Run(name+"/per-tx-"+strconv.Itoa(batch), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					calls := make([]*data.Call, batch)
					for i := range calls {
						calls[i] = newCall()
					}
					if err := db.update(func(tx *bbolt.Tx) error {
						for _, c := range calls {
							if err := store(tx, c, terms); err != nil {
								return err
							}
						}
						return nil
					}); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*batch), "µs/call")
			})
		}
	}
}
