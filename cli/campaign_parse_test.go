package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestParseWindow: days by name, by range and both; the hours as given (the server
// checks them); a form it cannot read names the flag.
func TestParseWindow(t *testing.T) {
	for _, c := range []struct {
		in, days, start, end, err string
	}{
		{in: "mon-fri 09:00-17:00", days: "mon,tue,wed,thu,fri", start: "09:00", end: "17:00"},
		{in: "mon-sun 00:00-23:59", days: "mon,tue,wed,thu,fri,sat,sun", start: "00:00", end: "23:59"},
		{in: "sat-sun 10:00-12:00", days: "sat,sun", start: "10:00", end: "12:00"},
		{in: "mon-mon 10:00-12:00", days: "mon", start: "10:00", end: "12:00"},
		{in: "mon,wed,fri-sun  8:00-25:00", days: "mon,wed,fri,sat,sun", start: "8:00", end: "25:00"},
		{in: "xyz 09:00-17:00", days: "xyz", start: "09:00", end: "17:00"}, // the server names window.days.0
		{in: "sun-mon 09:00-17:00", err: "sun-mon is not a range"},
		{in: "mon-xyz 09:00-17:00", err: "mon-xyz is not a range"},
		{in: "09:00-17:00", err: "want DAYS HH:MM-HH:MM"},
		{in: "mon 09:00", err: "want DAYS HH:MM-HH:MM"},
		{in: "mon 09:00-17:00 extra", err: "want DAYS HH:MM-HH:MM"},
		{in: "", err: "want DAYS HH:MM-HH:MM"},
	} {
		w, err := parseWindow(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), "--window") {
				t.Errorf("%q: error %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || strings.Join(w.Days, ",") != c.days || w.Start != c.start || w.End != c.end {
			t.Errorf("%q: %+v %v", c.in, w, err)
		}
	}
}

// TestParseRetry: the outcomes, attempts and backoff in that order; no outcome is an
// empty list (nothing retried); numbers that are not integers name the flag.
func TestParseRetry(t *testing.T) {
	for _, c := range []struct {
		in       string
		on       []string
		attempts int
		backoff  int
		ok       bool
	}{
		{"no_answer,busy:3:60", []string{"no_answer", "busy"}, 3, 60, true},
		{"voicemail:1:10080", []string{"voicemail"}, 1, 10080, true},
		{":1:1", []string{}, 1, 1, true},
		{"busy:0:0", []string{"busy"}, 0, 0, true}, // the server names the bounds
		{"busy:3", nil, 0, 0, false},
		{"busy:3:60:1", nil, 0, 0, false},
		{"busy:x:60", nil, 0, 0, false},
		{"busy:3:1h", nil, 0, 0, false},
	} {
		r, err := parseRetry(c.in)
		if !c.ok {
			if err == nil || !strings.Contains(err.Error(), "--retry") {
				t.Errorf("%q: error %v", c.in, err)
			}
			continue
		}
		if err != nil || !slices.Equal(r.On, c.on) || r.On == nil || r.MaxAttempts != c.attempts || r.BackoffMinutes != c.backoff {
			t.Errorf("%q: %+v %v", c.in, r, err)
		}
	}
}

// TestReadRecipients: a CSV is passed on as it is; a JSON list is decoded strictly; an
// empty list, an unknown member and another extension are refused naming the flag.
func TestReadRecipients(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	rs, csv, err := readRecipients(write("a.CSV", "phone_number\n+14155550101\n"))
	if err != nil || rs != nil || string(csv) != "phone_number\n+14155550101\n" {
		t.Errorf("a CSV: %v %q %v", rs, csv, err)
	}
	rs, csv, err = readRecipients(write("a.json", `[{"phone_number": "+14155550101", "timezone": "Europe/Paris", "variables": {"n": 1}}]`))
	if err != nil || csv != nil || len(rs) != 1 || *rs[0].Timezone != "Europe/Paris" || rs[0].Variables["n"] != json.Number("1") {
		t.Errorf("a JSON list: %+v %v", rs, err)
	}
	for _, bad := range []string{write("empty.json", "[]"), write("member.json", `[{"phone": "+14155550101"}]`),
		write("object.json", `{"recipients": []}`), write("list.txt", "+14155550101\n"), filepath.Join(dir, "missing.csv")} {
		if _, _, err := readRecipients(bad); err == nil || (!strings.Contains(err.Error(), "--recipients") && !os.IsNotExist(err)) {
			t.Errorf("%s: %v", filepath.Base(bad), err)
		}
	}
}
