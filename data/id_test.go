package data

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestIDsAreTimeOrderedAndMonotonic(t *testing.T) {
	now := time.Date(2026, 11, 21, 10, 4, 5, 123e6, time.UTC)
	g := &IDGen{Now: func() time.Time { return now }, Rand: rand.Reader}
	prev := ""
	for i := 0; i < 10000; i++ { // all in one millisecond
		id := g.New(PrefixAgent)
		if id <= prev {
			t.Fatalf("id %d %s not after %s", i, id, prev)
		}
		if !ValidID(PrefixAgent, id) {
			t.Fatalf("invalid id %s", id)
		}
		prev = id
	}
	// A later millisecond sorts after; a clock going back does not break the order.
	now = now.Add(time.Millisecond)
	later := g.New(PrefixAgent)
	if later <= prev {
		t.Errorf("later ms %s before %s", later, prev)
	}
	now = now.Add(-time.Hour)
	if back := g.New(PrefixAgent); back <= later {
		t.Errorf("clock stepped back: %s before %s", back, later)
	}
	// Ids of two generators sort by their time part.
	g2 := NewIDGen()
	a := g2.New(PrefixUser)
	time.Sleep(2 * time.Millisecond)
	if b := g2.New(PrefixUser); b <= a || len(b) != len(PrefixUser)+26 {
		t.Errorf("%s then %s", a, b)
	}
	// The time part encodes the millisecond.
	fixed := &IDGen{Now: func() time.Time { return time.UnixMilli(32) }, Rand: bytes.NewReader(make([]byte, 10))}
	if id := fixed.New("x_"); id != "x_00000000100000000000000000" {
		t.Errorf("zero id %s", id)
	}
}

func TestValidID(t *testing.T) {
	good := NewIDGen().New(PrefixWorkspace)
	cases := map[string]bool{
		good:                             true,
		"ws_01JD6000000000000000000000":  true,
		"ws_7ZZZZZZZZZZZZZZZZZZZZZZZZZ":  true,
		"ws_8ZZZZZZZZZZZZZZZZZZZZZZZZZ":  false, // more than 128 bits
		"usr_01JD6000000000000000000000": false, // wrong prefix for ws_
		"ws_01JD600000000000000000000":   false, // short
		"ws_01JD60000000000000000000000": false, // long
		"ws_01JD600000000000000000000I":  false, // I, L, O, U are not Crockford
		"ws_01JD600000000000000000000L":  false,
		"ws_01JD600000000000000000000O":  false,
		"ws_01JD600000000000000000000U":  false,
		"ws_01jd6000000000000000000000":  false, // lower case
		"ws_01JD6000000000000000000/..":  false,
		"":                               false,
		"ws_":                            false,
	}
	for id, want := range cases {
		if got := ValidID(PrefixWorkspace, id); got != want {
			t.Errorf("ValidID(%q) = %v", id, got)
		}
	}
}

func TestTimeJSON(t *testing.T) {
	tm := NewTime(time.Date(2026, 11, 21, 11, 4, 5, 123456789, time.FixedZone("CET", 3600)))
	b, _ := json.Marshal(tm)
	if string(b) != `"2026-11-21T10:04:05.123Z"` {
		t.Errorf("marshal %s", b)
	}
	b, _ = json.Marshal(NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)))
	if string(b) != `"2026-01-02T03:04:05.000Z"` {
		t.Errorf("whole seconds %s", b)
	}
	var back Time
	if err := json.Unmarshal([]byte(`"2026-11-21T11:04:05.123456+01:00"`), &back); err != nil || !back.Equal(tm.Time) {
		t.Errorf("round trip %v %v", back, err)
	}
	var zero Time
	if b, _ := json.Marshal(zero); string(b) != "null" {
		t.Errorf("zero %s", b)
	}
	if err := json.Unmarshal([]byte(`null`), &back); err != nil || !back.IsZero() {
		t.Errorf("null %v %v", back, err)
	}
	for _, bad := range []string{`"yesterday"`, `12`, `"2026-11-21"`} {
		if err := json.Unmarshal([]byte(bad), &back); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
	if zero.Ptr() != nil || tm.Ptr() == nil {
		t.Error("Ptr")
	}
	var p struct {
		At *Time `json:"at"`
	}
	if b, _ := json.Marshal(p); string(b) != `{"at":null}` {
		t.Errorf("nil pointer %s", b)
	}
}

func TestETagAndIfMatch(t *testing.T) {
	type rec struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	}
	a, b := rec{"1", "a"}, rec{"1", "b"}
	ea := ETagOf(a)
	if ea == ETagOf(b) || ea != ETagOf(rec{"1", "a"}) || !strings.HasPrefix(ea, `"`) || !strings.HasSuffix(ea, `"`) {
		t.Errorf("etags %s %s", ea, ETagOf(b))
	}
	raw, _ := json.Marshal(a)
	if ETagOfBytes(raw) != ea {
		t.Error("ETagOf and ETagOfBytes disagree")
	}
	for im, ok := range map[string]bool{
		"":                    true,
		"*":                   true,
		ea:                    true,
		`"x", ` + ea:          true,
		` ` + ea + ` `:        true,
		ETagOf(b):             false,
		`W/` + ea:             false, // strong comparison
		strings.Trim(ea, `"`): false,
		// RFC 9110's grammar, as FuzzIfMatch found it read loosely: "*" only alone, a
		// comma inside a quoted tag belongs to the tag, elements separated by commas
		// with space or tab around them, nothing after an unterminated tag.
		`*, "x"`:           false,
		`"x", *`:           false,
		`"a,` + ea:         false,
		"\v" + ea:          false,
		`"x" ` + ea:        false,
		ea + `,`:           true,
		`,, ` + ea + "\t,": true,
		`"x", W/` + ea:     false,
		`"x,y", ` + ea:     true,
		ea + `, "x`:        false,
	} {
		err := CheckIfMatch(im, a)
		if (err == nil) != ok {
			t.Errorf("If-Match %q: %v", im, err)
		}
		if err != nil && ErrorCode(err) != EPRECONDITION {
			t.Errorf("code %s", ErrorCode(err))
		}
	}
}

func TestErrors(t *testing.T) {
	if ErrorCode(nil) != "" || ErrorCode(NotFound("x")) != ENOTFOUND || ErrorCode(bytes.ErrTooLarge) != EINTERNAL {
		t.Error("ErrorCode")
	}
	if ErrorMessage(bytes.ErrTooLarge) != "Internal error." {
		t.Error("internal message leaks")
	}
	e := FieldError("b", "m")
	e.Fields["a"] = []string{"n"}
	if got := e.SortedFieldPaths(); len(got) != 2 || got[0] != "a" {
		t.Errorf("%v", got)
	}
}

// Ids of one generator order by creation across prefixes, within one millisecond too.
func TestMadeBefore(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	g := &IDGen{Now: func() time.Time { return now }, Rand: rand.Reader}
	a, b, c := g.New(PrefixEvent), g.New(PrefixWebhook), g.New(PrefixEvent)
	if !MadeBefore(a, b) || !MadeBefore(b, c) || MadeBefore(c, a) || MadeBefore(b, b) {
		t.Errorf("order of %s, %s, %s", a, b, c)
	}
}

func TestIDFloorBoundsTheIDsOfItsMillisecond(t *testing.T) {
	at := time.Date(2026, 11, 21, 10, 4, 5, 123e6, time.UTC)
	floor := IDFloor(PrefixDelivery, at)
	if !ValidID(PrefixDelivery, floor) || !IDTime(PrefixDelivery, floor).Equal(at) {
		t.Fatalf("floor %s: valid %v, time %v", floor, ValidID(PrefixDelivery, floor), IDTime(PrefixDelivery, floor))
	}
	for _, c := range []struct {
		made    time.Time
		atLeast bool
	}{{at.Add(-time.Millisecond), false}, {at, true}, {at.Add(999 * time.Microsecond), true}, {at.Add(time.Millisecond), true}} {
		g := &IDGen{Now: func() time.Time { return c.made }, Rand: rand.Reader}
		for range 100 {
			if id := g.New(PrefixDelivery); (id >= floor) != c.atLeast {
				t.Fatalf("id %s made at %v: at or after the floor %s = %v, want %v", id, c.made, floor, id >= floor, c.atLeast)
			}
		}
	}
}

func TestIDBoundRoundsAPartialMillisecondUp(t *testing.T) {
	at := time.Date(2026, 11, 21, 10, 4, 5, 123e6, time.UTC)
	if got := IDBound(PrefixCall, at); got != IDFloor(PrefixCall, at) {
		t.Errorf("on a millisecond: IDBound %s, IDFloor %s", got, IDFloor(PrefixCall, at))
	}
	bound := IDBound(PrefixCall, at.Add(time.Microsecond))
	if !IDTime(PrefixCall, bound).Equal(at.Add(time.Millisecond)) {
		t.Fatalf("bound %s carries %v", bound, IDTime(PrefixCall, bound))
	}
	for _, c := range []struct {
		made    time.Time
		atLeast bool
	}{{at, false}, {at.Add(999 * time.Microsecond), false}, {at.Add(time.Millisecond), true}} {
		g := &IDGen{Now: func() time.Time { return c.made }, Rand: rand.Reader}
		for range 100 {
			if id := g.New(PrefixCall); (id >= bound) != c.atLeast {
				t.Fatalf("id %s made at %v: at or after the bound %s = %v, want %v", id, c.made, bound, id >= bound, c.atLeast)
			}
		}
	}
}
