package evalset

import (
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/knowledge"
)

func TestParseFusion(t *testing.T) {
	for _, c := range []struct {
		spec string
		want knowledge.Fusion
		err  string // part of the error; "" when it parses
	}{
		{"linear:0", knowledge.Fusion{Method: "linear"}, ""},
		{"linear:0.5", knowledge.Fusion{Method: "linear", VectorWeight: 0.5}, ""},
		{"linear:1", knowledge.Fusion{Method: "linear", VectorWeight: 1}, ""},
		{"linear:1.0001", knowledge.Fusion{}, "from 0 to 1"},
		{"linear:-0.0001", knowledge.Fusion{}, "from 0 to 1"},
		{"linear:NaN", knowledge.Fusion{}, "from 0 to 1"},
		{"linear:Inf", knowledge.Fusion{}, "from 0 to 1"},
		{"linear:half", knowledge.Fusion{}, "from 0 to 1"},
		{"linear", knowledge.Fusion{}, "no vector share"},
		{"linear:0.5:60", knowledge.Fusion{}, "too many parts"},
		{"rrf:0.5", knowledge.Fusion{Method: "rrf", VectorWeight: 0.5, RRFK: 60}, ""},
		{"rrf:0.3:1", knowledge.Fusion{Method: "rrf", VectorWeight: 0.3, RRFK: 1}, ""},
		{"rrf:0.3:0", knowledge.Fusion{}, "K must be"},
		{"rrf:0.3:ten", knowledge.Fusion{}, "K must be"},
		{"rrf:0.3:60:1", knowledge.Fusion{}, "too many parts"},
		{"cosine:0.5", knowledge.Fusion{}, `unknown method "cosine"`},
		{"", knowledge.Fusion{}, `unknown method ""`},
	} {
		got, err := ParseFusion(c.spec)
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%q: %v", c.spec, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%q: error %v, want one saying %q", c.spec, err, c.err)
		case got != c.want:
			t.Errorf("%q = %+v, want %+v", c.spec, got, c.want)
		}
	}
}

// TestFusionModeReadsBack: a fusion's mode name, less "hybrid:", is a spec that parses
// back to the same fusion, so a report's rows say exactly what was measured.
func TestFusionModeReadsBack(t *testing.T) {
	for _, f := range []knowledge.Fusion{
		{Method: "linear", VectorWeight: 0.35},
		{Method: "rrf", VectorWeight: 0.5, RRFK: 10},
	} {
		mode := FusionMode(f)
		got, err := ParseFusion(strings.TrimPrefix(mode, "hybrid:"))
		if err != nil || got != f {
			t.Errorf("%+v: mode %q reads back as %+v, %v", f, mode, got, err)
		}
	}
}
