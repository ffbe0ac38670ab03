package redact

import "testing"

// TestCardWithDots: a written card grouped by dots is a card when every separator is a dot
// and it passes Luhn; dots mixed with spaces, a Luhn failure or a version number are not.
func TestCardWithDots(t *testing.T) {
	r, err := New(Config{Detectors: []string{Card}})
	if err != nil {
		t.Fatal(err)
	}
	for text, want := range map[string]string{
		"Visa 4242.4242.4242.4242 please": "Visa [card] please",
		"pay 5105.1051.0510.5100.":        "pay [card].",
		"it is 4242.4242.4242.4241":       "it is 4242.4242.4242.4241",
		"it is 4242.4242 4242.4242":       "it is 4242.4242 4242.4242",
		"release 4.2.4.2 of 2024.11.20":   "release 4.2.4.2 of 2024.11.20",
	} {
		if got, _ := r.Apply(text); got != want {
			t.Errorf("Apply(%q) = %q, want %q", text, got, want)
		}
	}
}
