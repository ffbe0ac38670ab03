package service_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
)

// BenchmarkKnowledgeQuery measures QueryKnowledgeBase over 10,000 one-chunk texts of 60
// Zipf-drawn words, after the index is built: the service's own cost (scope check, search,
// the hits' sources) without HTTP.
func BenchmarkKnowledgeQuery(b *testing.B) {
	db := testkit.OpenDB(b, nil)
	svc := servicesOn(b, db, db, nil)
	u := mustUser(b, svc, "bench@example.com")
	ctx := ownerCtx(u.ID, u.PersonalWorkspaceID)
	kbs := servicesOn(b, db, db, func(o *service.Options) { o.Knowledge.MaxSources = 20_000 }).KnowledgeBases
	kb, err := kbs.CreateKnowledgeBase(ctx, data.KnowledgeBaseCreate{Name: "Bench"})
	if err != nil {
		b.Fatal(err)
	}
	vocab := make([]string, 5000)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("w%dx", i)
	}
	zipf := rand.NewZipf(rand.New(rand.NewPCG(3, 4)), 1.1, 1, uint64(len(vocab)-1))
	for done := 0; done < 10_000; done += 100 {
		var in data.SourcesAdd
		for range 100 {
			words := make([]string, 60)
			for j := range words {
				words[j] = vocab[zipf.Uint64()]
			}
			in.Texts = append(in.Texts, data.TextInput{Content: strings.Join(words, " ")})
		}
		if _, err := kbs.AddSources(ctx, kb.ID, in); err != nil {
			b.Fatal(err)
		}
	}
	k := 5
	q := data.KnowledgeQuery{Query: "w12x w345x w2100x w7x", ChunksToRetrieve: &k}
	if _, err := kbs.QueryKnowledgeBase(ctx, kb.ID, q); err != nil { // builds the index
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := kbs.QueryKnowledgeBase(ctx, kb.ID, q); err != nil {
			b.Fatal(err)
		}
	}
}
