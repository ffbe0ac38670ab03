package fulltext

import (
	"math"
	"reflect"
	"testing"
)

func TestScore(t *testing.T) {
	s := Stats{Calls: 10, DF: []int64{1, 5}}
	// One occurrence of the rare term: idf ln(1 + 9.5/1.5), frequency part 1.
	want := int64(math.Round(math.Log(1+9.5/1.5) * 1000))
	if got := s.Score([]int{1, 0}); got != want {
		t.Errorf("score %d, want %d", got, want)
	}
	// More occurrences saturate: 3 counts 3*2.2/4.2 times one.
	want3 := int64(math.Round(math.Log(1+9.5/1.5) * 3 * 2.2 / 4.2 * 1000))
	if got := s.Score([]int{3, 0}); got != want3 {
		t.Errorf("score of tf 3: %d, want %d", got, want3)
	}
	if got := s.Score([]int{0, 0}); got != 0 {
		t.Errorf("no term: %d", got)
	}
	if s.Score([]int{0, 1}) >= s.Score([]int{1, 0}) {
		t.Error("the commoner term scores at least the rarer")
	}
}

func TestCursorKeyRoundTrip(t *testing.T) {
	s := Stats{Calls: 1_000_000, DF: []int64{12, 0, 345}}
	r := Ranked{Score: 4321, ID: "call_01ABC"}
	key := s.CursorKey("call_01XYZ", r)
	anchor, got, gotR, ok := ParseCursorKey(key, 3)
	if !ok || anchor != "call_01XYZ" || !reflect.DeepEqual(got, s) || gotR != r {
		t.Fatalf("parsed %q %+v %+v %v", anchor, got, gotR, ok)
	}
	for name, bad := range map[string]string{
		"fewer terms":  Stats{Calls: 1, DF: []int64{1, 2}}.CursorKey("a", r),
		"no anchor":    s.CursorKey("", r),
		"four parts":   "a\x001\x001,2,3\x005",
		"bad calls":    "a\x00x\x001,2,3\x005\x00id",
		"bad score":    "a\x001\x001,2,3\x00x\x00id",
		"bad df":       "a\x001\x001,x,3\x005\x00id",
		"empty string": "",
	} {
		if _, _, _, ok := ParseCursorKey(bad, 3); ok {
			t.Errorf("%s: %q parsed", name, bad)
		}
	}
}

func TestPageBounds(t *testing.T) {
	window := func() []Ranked {
		return []Ranked{{1, "c"}, {5, "a"}, {3, "e"}, {5, "b"}, {3, "d"}} // ranked: b a e d c
	}
	w := window()
	if lo, hi := PageBounds(w, 2, nil, true); lo != 0 || hi != 2 {
		t.Errorf("first page [%d,%d)", lo, hi)
	}
	want := []Ranked{{5, "b"}, {5, "a"}, {3, "e"}, {3, "d"}, {1, "c"}}
	if !reflect.DeepEqual(w, want) {
		t.Fatalf("sorted %v", w)
	}
	for _, c := range []struct {
		key    Ranked
		older  bool
		lo, hi int
	}{
		{Ranked{5, "a"}, true, 2, 4},  // after a: e d
		{Ranked{3, "d"}, true, 4, 5},  // after d: c, the last
		{Ranked{1, "c"}, true, 5, 5},  // after the last: nothing
		{Ranked{4, "z"}, true, 2, 4},  // a key gone from the window: where it would rank
		{Ranked{3, "e"}, false, 0, 2}, // before e: b a
		{Ranked{5, "a"}, false, 0, 1}, // before a: b only
		{Ranked{5, "b"}, false, 0, 0}, // before the first: nothing
	} {
		key := c.key
		if lo, hi := PageBounds(window(), 2, &key, c.older); lo != c.lo || hi != c.hi {
			t.Errorf("key %v older %v: [%d,%d), want [%d,%d)", c.key, c.older, lo, hi, c.lo, c.hi)
		}
	}
}
