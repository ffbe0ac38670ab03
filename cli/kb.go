package cli

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/voiceapi/voiceapi/knowledge"
	"github.com/voiceapi/voiceapi/knowledge/evalset"
)

// NewKBCommand is `voiceapi kb`: knowledge base tools that need no server.
func NewKBCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "kb", Short: "Knowledge base tools"}
	cmd.AddCommand(newKBEvalCommand())
	return cmd
}

// newKBEvalCommand is `voiceapi kb eval`: retrieval quality on an evaluation set.
func newKBEvalCommand() *cobra.Command {
	var setDir, url, model, key string
	var fusions []string
	var misses, published bool
	cmd := &cobra.Command{
		Use:   "eval",
		Short: "Measure retrieval quality (recall@1/3/5, MRR) on an evaluation set",
		Long: `Indexes each knowledge base of an evaluation set the way the server does and asks its
questions: recall@k is the share of questions whose answer is among the first k chunks,
MRR the mean of 1/rank of the first answering chunk (0 past rank 10). Lexical ranking is
always measured; with --embeddings-url and --embeddings-model, vector and hybrid too.
Without --set, the set built into voiceapi (docs/knowledge-bases.md names its sources).
With --published, each source is indexed as its material was published, every question on
a line of its own before its answer, as a team uploading an FAQ page has it.
With --fusion (repeatable), hybrid is measured once per fusion given instead of with the
server's: "linear:W" blends the scores with the vector side's share W, "rrf:W[:K]" fuses
the ranks (reciprocal rank fusion, K 60 when left out); every fusion on one embedding.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			bases, err := loadEvalSet(setDir)
			if err != nil {
				return err
			}
			opts := evalset.Options{Published: published}
			if url != "" || model != "" {
				if err := embeddingsPair(url, model); err != nil {
					return err
				}
				opts.Embedder = knowledge.NewOpenAIEmbedder(knowledge.OpenAIEmbedderConfig{BaseURL: url, Model: model, APIKey: key})
			}
			if len(fusions) > 0 && opts.Embedder == nil {
				return fmt.Errorf("--fusion needs --embeddings-url and --embeddings-model: hybrid retrieval fuses lexical and vector rankings")
			}
			for _, spec := range fusions {
				f, err := evalset.ParseFusion(spec)
				if err != nil {
					return err
				}
				opts.Fusions = append(opts.Fusions, f)
			}
			rep, err := evalset.Run(cmd.Context(), bases, opts)
			if err != nil {
				return err
			}
			rep.Print(cmd.OutOrStdout())
			if misses {
				for _, m := range rep.Modes {
					for _, q := range rep.Misses[m] {
						fmt.Fprintf(cmd.OutOrStdout(), "%s miss: %s\n", m, q)
					}
				}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&setDir, "set", "", "directory of an evaluation set (*.md, the format of knowledge/evalset/data); the built-in set when empty")
	f.StringVar(&url, "embeddings-url", "", "OpenAI-compatible API root to measure vector and hybrid retrieval with")
	f.StringVar(&model, "embeddings-model", "", "embeddings model name")
	f.StringVar(&key, "embeddings-api-key", "", "bearer token of the embeddings endpoint")
	f.BoolVar(&misses, "misses", false, "also list the questions whose answer was not in the top 5")
	f.StringArrayVar(&fusions, "fusion", nil, "a hybrid fusion to measure, linear:W or rrf:W[:K] (repeatable); the server's when none")
	f.BoolVar(&published, "published", false, "index each source with its questions before their answers, as published")
	return cmd
}

func loadEvalSet(dir string) ([]evalset.Base, error) {
	if dir == "" {
		return evalset.Builtin()
	}
	// Named with the flag: a mistyped --set said only "no *.md knowledge bases found".
	if fi, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("--set %s: %w", dir, err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("--set %s is not a directory: give the directory that holds the set's *.md files", dir)
	}
	bases, err := evalset.Load(os.DirFS(dir))
	if err != nil {
		return nil, fmt.Errorf("--set %s: %w (the format: docs/knowledge-bases.md, retrieval quality)", dir, err)
	}
	return bases, nil
}
