package knowledge

import (
	"bufio"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
)

// Scratch experiments of the fifth round, on top of the background document frequency;
// off by default, reverted once decided.
var (
	bgSource     = false // the background smooths the whole-source evidence's idf too
	expandWeight = 0.0   // embedding neighbours of English question words, at this share of their idf × cosine
	expandK      = 3
	expandMinCos = 0.6
	neighbours   *wordVectors
)

type wordVectors struct {
	words []string
	index map[string]int
	vecs  [][]float32 // unit length
}

// LoadNeighbours reads GloVe's text format (a word and its numbers a line), keeping the
// words of letters a–z that are no stop words.
func LoadNeighbours(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	wv := &wordVectors{index: map[string]int{}}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		w := fields[0]
		if len(w) < 2 || strings.IndexFunc(w, func(c rune) bool { return c < 'a' || c > 'z' }) >= 0 || isStop(english_, w) {
			continue
		}
		v := make([]float32, len(fields)-1)
		var norm float64
		for i, x := range fields[1:] {
			y, _ := strconv.ParseFloat(x, 64)
			v[i] = float32(y)
			norm += y * y
		}
		norm = math.Sqrt(norm)
		for i := range v {
			v[i] /= float32(norm)
		}
		wv.index[w] = len(wv.words)
		wv.words = append(wv.words, w)
		wv.vecs = append(wv.vecs, v)
	}
	neighbours = wv
	return sc.Err()
}

type expansionTerm struct {
	term   string
	weight float64 // a share of the term's idf
}

// expansions returns the stems of the expandK nearest words of each English question
// word, cosine at least expandMinCos, other than the question's own stems.
func expansions(query string, own []string) []expansionTerm {
	if expandWeight <= 0 || neighbours == nil {
		return nil
	}
	var out []expansionTerm
	for _, w := range splitWords(query) {
		if isStop(english_, w) || len(w) < 2 {
			continue
		}
		i, ok := neighbours.index[w]
		if !ok {
			continue
		}
		q := neighbours.vecs[i]
		type cand struct {
			j   int
			cos float64
		}
		var best []cand
		for j, v := range neighbours.vecs {
			if j == i {
				continue
			}
			var dot float32
			for d := range v {
				dot += q[d] * v[d]
			}
			c := float64(dot)
			if c < expandMinCos {
				continue
			}
			best = append(best, cand{j, c})
		}
		slices.SortFunc(best, func(a, b cand) int {
			if a.cos > b.cos {
				return -1
			}
			if a.cos < b.cos {
				return 1
			}
			return a.j - b.j
		})
		n := 0
		for _, c := range best {
			if n == expandK {
				break
			}
			s := stem(english_, neighbours.words[c.j])
			if slices.Contains(own, s) || slices.ContainsFunc(out, func(e expansionTerm) bool { return e.term == s }) {
				continue
			}
			out = append(out, expansionTerm{s, expandWeight * c.cos})
			n++
		}
	}
	return out
}
