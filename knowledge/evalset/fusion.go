package evalset

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/voiceapi/voiceapi/knowledge"
)

// defaultRRFK is reciprocal rank fusion's constant when a fusion spec names none: the
// value of the paper that introduced it (Cormack, Clarke and Büttcher, 2009).
const defaultRRFK = 60

// ParseFusion reads a fusion as `voiceapi kb eval --fusion` takes it: "linear:W" (the
// vector side's share W of the score) or "rrf:W[:K]" (its share of the rank votes, with
// the constant K, 60 when left out); W in [0, 1], K a whole number from 1.
func ParseFusion(spec string) (knowledge.Fusion, error) {
	parts := strings.Split(spec, ":")
	bad := func(why string) (knowledge.Fusion, error) {
		return knowledge.Fusion{}, fmt.Errorf("fusion %q: %s (want linear:W or rrf:W[:K], W from 0 to 1)", spec, why)
	}
	method := parts[0]
	switch {
	case method != knowledge.FuseLinear && method != knowledge.FuseRRF:
		return bad("unknown method " + strconv.Quote(method))
	case len(parts) < 2:
		return bad("no vector share")
	case method == knowledge.FuseLinear && len(parts) > 2, len(parts) > 3:
		return bad("too many parts")
	}
	w, err := strconv.ParseFloat(parts[1], 64)
	if err != nil || !(w >= 0 && w <= 1) {
		return bad("the vector share must be a number from 0 to 1")
	}
	f := knowledge.Fusion{Method: method, VectorWeight: w}
	if method == knowledge.FuseRRF {
		f.RRFK = defaultRRFK
		if len(parts) == 3 {
			k, err := strconv.Atoi(parts[2])
			if err != nil || k < 1 {
				return bad("K must be a whole number from 1")
			}
			f.RRFK = k
		}
	}
	return f, nil
}

// FusionMode names the hybrid mode that measures f in a report: "hybrid:" and the spec
// ParseFusion reads back.
func FusionMode(f knowledge.Fusion) string {
	w := strconv.FormatFloat(f.VectorWeight, 'f', -1, 64)
	if f.Method == knowledge.FuseRRF {
		return fmt.Sprintf("hybrid:rrf:%s:%d", w, f.RRFK)
	}
	return "hybrid:" + f.Method + ":" + w
}
