package phone

import "testing"

func TestNormalize(t *testing.T) {
	for _, c := range []struct {
		raw, region, want string
		ok                bool
	}{
		{"+14155550123", "", "+14155550123", true},
		{" +1 (415) 555-0123 ", "", "+14155550123", true},
		{"(415) 555-0123", "US", "+14155550123", true},
		{"415.555.0123", "US", "+14155550123", true},
		{"011 33 1 42 68 53 00", "US", "+33142685300", true}, // the region's international prefix
		{"0044 20 7946 0958", "FR", "+442079460958", true},
		{"01 42 68 53 00", "FR", "+33142685300", true}, // France's trunk prefix dropped
		{"+44 20 7946 0958", "FR", "+442079460958", true},
		{"(415) 555-0123", "", "", false}, // national, no region to read it in
		{"+1 415", "", "", false},         // too short for its country
		{"+1 415 555 0123 4567 8", "", "", false},
		{"call me", "US", "", false},
		{"", "US", "", false},
		// Read as +358000000000, which reads back as +35800000000 (found by FuzzPhoneNumber).
		{"!000( 000-0~A000", "AX", "", false},
		{"+358000000000", "", "", false},
		{"+358 40 1234567", "", "+358401234567", true},
		{"040 1234567", "FI", "+358401234567", true},
	} {
		got, ok := Normalize(c.raw, c.region)
		if got != c.want || ok != c.ok {
			t.Errorf("Normalize(%q, %q) = %q, %v; want %q, %v", c.raw, c.region, got, ok, c.want, c.ok)
		}
	}
}

func TestRegion(t *testing.T) {
	for in, want := range map[string]string{"+14155550123": "US", "+33142685300": "FR", "+442079460958": "GB", "nope": ""} {
		if got := Region(in); got != want {
			t.Errorf("Region(%q) = %q, want %q", in, got, want)
		}
	}
}

func BenchmarkNormalize(b *testing.B) {
	for b.Loop() {
		Normalize("(415) 555-0123", "US")
	}
}

// An E.164 number, as an exported list or a stored recipient holds it.
func BenchmarkNormalizeE164(b *testing.B) {
	for b.Loop() {
		Normalize("+14155550123", "US")
	}
}
