package evalset

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/internal/embedtest"
	"github.com/voiceapi/voiceapi/knowledge"
)

func TestBuiltinSetParses(t *testing.T) {
	bases, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	questions := 0
	for _, b := range bases {
		for _, q := range b.Questions {
			questions++
			content := b.Sources[q.Source].Content
			if !strings.Contains(content, q.Answer) {
				t.Errorf("%s: the answer to %q is not in its source's content", b.Name, q.Text)
			}
			if !strings.Contains(b.Sources[q.Source].Published, q.Text+"\n\n"+q.Answer) {
				t.Errorf("%s: the question %q is not before its answer in its source as published", b.Name, q.Text)
			}
			for _, line := range strings.Split(content, "\n") {
				if strings.EqualFold(strings.TrimSpace(line), q.Text) {
					t.Errorf("%s: the question %q is a line of its source: the set must not hand lexical ranking its heading", b.Name, q.Text)
				}
			}
		}
	}
	if len(bases) < 3 || questions < 100 {
		t.Errorf("%d knowledge bases, %d questions; want 3+ and 100+", len(bases), questions)
	}
}

func TestParse(t *testing.T) {
	b, err := parse("x", "# source: One\nintro\n\n## Q: first?\nanswer one\n\n## Q: second?\nanswer two\n# source: Two\n## Q: third?\nanswer three\n")
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Sources) != 2 || len(b.Questions) != 3 {
		t.Fatalf("%d sources, %d questions", len(b.Sources), len(b.Questions))
	}
	if got := b.Sources[0].Content; got != "intro\n\nanswer one\n\nanswer two" {
		t.Errorf("content %q", got)
	}
	if got := b.Sources[0].Published; got != "intro\n\nfirst?\n\nanswer one\n\nsecond?\n\nanswer two" {
		t.Errorf("published %q", got)
	}
	if q := b.Questions[2]; q.Source != 1 || q.Answer != "answer three" || q.Text != "third?" {
		t.Errorf("question %+v", q)
	}
	if _, err := parse("x", "## Q: orphan?\nanswer\n"); err == nil {
		t.Error("a question before any source was accepted")
	}
}

func TestAnswers(t *testing.T) {
	answer := "Untagged unions would violate Go's memory safety guarantees."
	for _, c := range []struct {
		chunk string
		want  bool
	}{
		{"Some text before. " + answer + " And after it, more text about variants.", true},
		{"Nothing of the kind is said here about unions or memory at all.", false},
		{"guarantees. Variant types, also known as algebraic types, provide a way", false},
	} {
		if got := answers(c.chunk, answer); got != c.want {
			t.Errorf("answers(%q) = %v, want %v", c.chunk, got, c.want)
		}
	}
}

// TestRetrievalQuality prints the figures of every mode on the built-in set (run with -v;
// docs/knowledge-bases.md records them) and holds lexical recall@3 to its recorded level.
// The vector and hybrid modes use embedtest's stand-in, which is no language model.
func TestRetrievalQuality(t *testing.T) {
	bases, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	stand := embedtest.Start()
	defer stand.Close()
	emb := knowledge.NewOpenAIEmbedder(knowledge.OpenAIEmbedderConfig{BaseURL: stand.BaseURL(), Model: "stand-in"})
	rep, err := Run(context.Background(), bases, Options{Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	rep.Print(&b)
	t.Log("\n" + b.String())
	if testing.Verbose() {
		for _, q := range rep.Misses[ModeLexical] {
			t.Logf("lexical miss (not in top 5): %s", q)
		}
	}
	if got := rep.All[ModeLexical].Recall3; got < lexicalRecall3Floor {
		t.Errorf("lexical recall@3 = %.3f, below its recorded %.3f", got, lexicalRecall3Floor)
	}
}

// TestFusionComparison prints hybrid figures for each fusion considered (run with -v;
// docs/knowledge-bases.md records them), on embedtest's stand-in vectors, all measured on
// one embedding of the set.
func TestFusionComparison(t *testing.T) {
	bases, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	stand := embedtest.Start()
	defer stand.Close()
	emb := knowledge.NewOpenAIEmbedder(knowledge.OpenAIEmbedderConfig{BaseURL: stand.BaseURL(), Model: "stand-in"})
	var fusions []knowledge.Fusion
	for _, spec := range comparedFusions {
		f, err := ParseFusion(spec)
		if err != nil {
			t.Fatal(err)
		}
		fusions = append(fusions, f)
	}
	rep, err := Run(context.Background(), bases, Options{Embedder: emb, Fusions: fusions})
	if err != nil {
		t.Fatal(err)
	}
	if inputs := stand.Inputs(); inputs > int64(rep.All[ModeLexical].Questions)+int64(chunkCount(t, bases)) {
		t.Errorf("%d texts embedded for %d fusions: the set was embedded more than once", inputs, len(fusions))
	}
	for _, spec := range comparedFusions {
		h, ok := rep.All["hybrid:"+spec]
		if !ok {
			t.Fatalf("no figures for %s among %v", spec, rep.Modes)
		}
		t.Logf("%s: recall@1 %.3f recall@3 %.3f recall@5 %.3f MRR %.3f", spec, h.Recall1, h.Recall3, h.Recall5, h.MRR)
		if h.Recall3 < rep.All[ModeVector].Recall3 {
			t.Errorf("%s: hybrid recall@3 %.3f below vector alone %.3f", spec, h.Recall3, rep.All[ModeVector].Recall3)
		}
	}
}

// comparedFusions are the fusions docs/knowledge-bases.md compares, as --fusion takes them.
var comparedFusions = []string{"linear:0.3", "linear:0.5", "linear:0.7", "rrf:0.5:60", "rrf:0.5:10", "rrf:0.3:60"}

// chunkCount is how many chunks the set's sources make, as Run indexes them.
func chunkCount(t *testing.T, bases []Base) int {
	t.Helper()
	n := 0
	for _, b := range bases {
		for i, src := range b.Sources {
			chunks, err := knowledge.ChunkSource(fmt.Sprintf("src%03d", i), src.Content)
			if err != nil {
				t.Fatal(err)
			}
			n += len(chunks)
		}
	}
	return n
}
