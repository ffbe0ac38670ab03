package knowledge

import (
	"fmt"
	"reflect"
	"sync"
	"testing"
)

func smallIndex() *Index {
	ix := NewIndex()
	ix.Add("hours", []Chunk{
		{ID: "h1", Text: "The store is open Monday to Friday from 9 am to 7 pm."},
		{ID: "h2", Text: "We are closed on Sundays and public holidays."},
	})
	ix.Add("ship", []Chunk{
		{ID: "s1", Text: "Standard shipping takes three to five business days."},
		{ID: "s2", Text: "Orders over 50 dollars ship for free."},
	})
	ix.Add("refund", []Chunk{{ID: "r1", Text: "Refunds are issued within five business days of receiving the returned item."}})
	return ix
}

func TestTokenizeAndStem(t *testing.T) {
	got, lang := analyze("How do I get my REFUNDS? Shipping, shipped & ship! Customer's policies 30 days. Café")
	want := []string{"refund", "ship", "ship", "ship", "custom", "polici", "30", "day", "café"}
	if !reflect.DeepEqual(got, want) || lang != english_ {
		t.Errorf("analyze = %q (%d), want %q in English", got, lang, want)
	}
	for a, b := range map[string]string{"charged": "charge", "opening": "opens", "booking": "booked", "billing": "bills", "hours": "hour"} {
		if stem(english_, a) != stem(english_, b) {
			t.Errorf("stem(%q) = %q, stem(%q) = %q: want equal", a, stem(english_, a), b, stem(english_, b))
		}
	}
}

// TestApostrophes: an apostrophe inside a word is read as its language uses it, so a
// possessive or an elided article does not make a word of its own that matches nothing.
func TestApostrophes(t *testing.T) {
	for _, c := range []struct {
		text string
		want []string
	}{
		{"Go's", []string{"go"}},
		{"what's", []string{"what"}},
		{"you're we'll they've I'm I'd", []string{"you", "we", "they", "i", "i"}},
		{"GO'S", []string{"go"}},
		{"don't isn't", []string{"dont", "isnt"}},
		{"O'Brien rock'n'roll o'clock", []string{"obrien", "rocknroll", "oclock"}},
		{"l'adresse d'identité", []string{"adresse", "identité"}},
		{"qu'il jusqu'à", []string{"il", "à"}},
		{"L’Adresse", []string{"adresse"}},
		{"users' guide 'quoted'", []string{"users", "guide", "quoted"}},
		{"l' x's", []string{"l", "x"}},
	} {
		if got := splitWords(c.text); !reflect.DeepEqual(got, c.want) {
			t.Errorf("splitWords(%q) = %q, want %q", c.text, got, c.want)
		}
	}
	ix := NewIndex()
	ix.Add("fr", []Chunk{{ID: "fr", Text: "Vérifiez l'adresse électronique de votre compte avant de continuer."}})
	ix.Add("go", []Chunk{{ID: "go", Text: "Go is mostly in the C family, with input from Pascal and Oberon."}})
	if hits := ix.Search("Quelle adresse électronique ?", 1, 0); len(hits) != 1 || hits[0].ChunkID != "fr" {
		t.Errorf("an elided word was not found by its bare form: %+v", hits)
	}
	if hits := ix.Search("Go's", 1, 0); len(hits) != 1 || hits[0].ChunkID != "go" {
		t.Errorf("a possessive was not found by its bare form: %+v", hits)
	}
}

// TestQuestionWordsAreStopWords: the words every question starts with carry none of its
// subject, in each language.
func TestQuestionWordsAreStopWords(t *testing.T) {
	for _, c := range []struct {
		text string
		lang language
		want []string
	}{
		{"Why didn't my password work?", english_, []string{"password", "work"}},
		{"¿Cómo cambio mi contraseña?", spanish_, analyzeAs("cambio contraseña", spanish_)},
		{"¿Dónde y cuándo recibo el código?", spanish_, analyzeAs("recibo código", spanish_)},
		{"Pourquoi et comment changer mon mot de passe ?", french_, analyzeAs("changer mot passe", french_)},
	} {
		if got := analyzeAs(c.text, c.lang); !reflect.DeepEqual(got, c.want) {
			t.Errorf("analyzeAs(%q) = %q, want %q", c.text, got, c.want)
		}
	}
}

func TestLanguages(t *testing.T) {
	for _, c := range []struct {
		text string
		want language
	}{
		{"¿Dónde está la oficina de correos más cercana?", spanish_},
		{"Je ne reçois pas le code sur mon téléphone", french_},
		{"Where is the nearest post office?", english_},
		{"GOMAXPROCS", english_},
	} {
		if got := detectLanguage(splitWords(c.text)); got != c.want {
			t.Errorf("detectLanguage(%q) = %d, want %d", c.text, got, c.want)
		}
	}
	// Spanish forms of one word meet at one stem, and Spanish stop words are dropped.
	if a, b := analyzeAs("contraseñas bloqueadas", spanish_), analyzeAs("contraseña bloqueada", spanish_); !reflect.DeepEqual(a, b) {
		t.Errorf("Spanish stems differ: %q vs %q", a, b)
	}
	if got := analyzeAs("la cuenta de su correo", spanish_); !reflect.DeepEqual(got, []string{"cuent", "corre"}) {
		t.Errorf("Spanish terms %q", got)
	}
	// A query with no language of its own is analyzed in the index's language.
	ix := NewIndex()
	ix.Add("es", []Chunk{{ID: "a", Text: "Su cuenta quedó bloqueada durante la verificación de identidad."}})
	if hits := ix.Search("verificaciones", 1, 0); len(hits) != 1 {
		t.Errorf("a bare Spanish word did not find the Spanish chunk: %+v", hits)
	}
}

func TestHeadingsWeigh(t *testing.T) {
	ix := NewIndex()
	ix.Add("returns", []Chunk{{ID: "r", Title: "Returns policy", Text: "Items may be sent back within 30 days."}})
	ix.Add("other", []Chunk{{ID: "o", Title: "Shipping", Text: "Returns are rare; most parcels arrive within 3 days."}})
	hits := ix.Search("returns", 2, 0)
	if len(hits) != 2 || hits[0].ChunkID != "r" {
		t.Fatalf("the chunk under the title \"Returns policy\" did not come first: %+v", hits)
	}
	got := headingsAbove([]Chunk{{Text: "# Guide\n\n## Setup\nInstall it."}, {Text: "More setup text."}, {Text: "## Usage\nRun it."}})
	want := []string{"Guide\nSetup\n", "Guide\nSetup\n", "Guide\nSetup\nUsage\n"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("headingsAbove = %q, want %q", got, want)
	}
}

func TestSearchRanksAndLimits(t *testing.T) {
	ix := smallIndex()
	hits := ix.Search("Are you open on Sunday?", 3, 0)
	if len(hits) == 0 || hits[0].ChunkID != "h2" || hits[0].SourceID != "hours" {
		t.Fatalf("hits %+v, want h2 first", hits)
	}
	hits = ix.Search("how many business days", 1, 0)
	if len(hits) != 1 {
		t.Fatalf("k=1 gave %d hits", len(hits))
	}
	all := ix.Search("business days shipping free refund store", 10, 0)
	for i, h := range all {
		if h.Score < 0 || h.Score > 1 {
			t.Errorf("score %v outside [0, 1]", h.Score)
		}
		if i > 0 && (all[i-1].Score < h.Score || all[i-1].Score == h.Score && all[i-1].ChunkID > h.ChunkID) {
			t.Errorf("not best first with ties by ID: %+v", all)
		}
	}
	for _, h := range ix.Search("business days", 10, 0.6) {
		if h.Score < 0.6 {
			t.Errorf("hit %s scored %.2f under the threshold", h.ChunkID, h.Score)
		}
	}
	if hits := ix.Search("the and of", 5, 0); hits != nil {
		t.Errorf("stop words only: %+v", hits)
	}
	if hits := ix.Search("shipping", 0, 0); hits != nil {
		t.Errorf("k=0: %+v", hits)
	}
	if hits := NewIndex().Search("shipping", 3, 0); hits != nil {
		t.Errorf("empty index: %+v", hits)
	}
}

func TestSearchTiesAreDeterministic(t *testing.T) {
	ix := NewIndex()
	ix.Add("a", []Chunk{{ID: "c", Text: "warranty claim"}, {ID: "a", Text: "warranty claim"}, {ID: "b", Text: "warranty claim"}})
	hits := ix.Search("warranty claim", 3, 0)
	if len(hits) != 3 || hits[0].ChunkID != "a" || hits[1].ChunkID != "b" || hits[2].ChunkID != "c" {
		t.Fatalf("ties: %+v", hits)
	}
	if hits[0].Score != hits[2].Score {
		t.Fatal("identical chunks scored differently")
	}
}

func TestAddReplacesAndRemove(t *testing.T) {
	ix := smallIndex()
	if ix.Len() != 5 {
		t.Fatalf("Len = %d", ix.Len())
	}
	ix.Add("ship", []Chunk{{ID: "s3", Text: "Express delivery arrives the next day."}})
	if ix.Len() != 4 {
		t.Fatalf("after replacing a source: Len = %d", ix.Len())
	}
	if hits := ix.Search("free shipping", 5, 0); len(hits) != 0 {
		t.Errorf("replaced chunks still found: %+v", hits)
	}
	if hits := ix.Search("express delivery", 5, 0); len(hits) != 1 || hits[0].SourceID != "ship" {
		t.Errorf("new chunk not found: %+v", hits)
	}
	ix.Remove("hours")
	ix.Remove("unknown")
	if hits := ix.Search("open Sunday", 5, 0); len(hits) != 0 {
		t.Errorf("removed source still found: %+v", hits)
	}
	if ix.Len() != 2 {
		t.Errorf("Len = %d after Remove", ix.Len())
	}
}

func TestRemoveCompactsAndKeepsScores(t *testing.T) {
	ix := NewIndex()
	ix.Add("keep", []Chunk{{ID: "k", Text: "warranty covers defects in materials"}})
	before := ix.Search("warranty defects", 1, 0)
	for i := 0; i < 3000; i++ {
		src := fmt.Sprintf("tmp%d", i)
		ix.Add(src, []Chunk{{ID: src, Text: "temporary note about parking"}})
		ix.Remove(src)
	}
	after := ix.Search("warranty defects", 1, 0)
	if ix.dead >= 1024+ix.live || len(ix.docs) > 1100 {
		t.Errorf("no compaction: %d docs, %d dead", len(ix.docs), ix.dead)
	}
	if len(after) != 1 || after[0].Score != before[0].Score || after[0].ChunkID != "k" {
		t.Errorf("before %+v, after %+v", before, after)
	}
}

func TestIndexConcurrentReadersAndWriter(t *testing.T) {
	ix := smallIndex()
	var wg sync.WaitGroup
	for r := 0; r < 8; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 300; i++ {
				for _, h := range ix.Search("business days open", 3, 0.1) {
					if h.Score < 0.1 || h.Score > 1 {
						t.Errorf("bad score %v", h.Score)
						return
					}
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 300; i++ {
			src := fmt.Sprintf("src%d", i%10)
			ix.Add(src, []Chunk{{ID: src + "-c", Text: "business days are Monday to Friday"}})
			if i%3 == 0 {
				ix.Remove(src)
			}
		}
	}()
	wg.Wait()
}
