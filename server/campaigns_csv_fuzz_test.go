package server

import (
	"bytes"
	"encoding/csv"
	"errors"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
)

// FuzzReadRecipientsCSV feeds any bytes to the CSV readers of a campaign's recipients and
// of a suppression import (docs/campaigns.md): no panic; a refusal is validation_failed
// whose every field is "file" or names a line the file has (<prefix>.line_<n>, 1 ≤ n ≤
// its line count); accepted rows come with increasing lines of the file (past the header),
// hold trimmed cells, and read back the same once written out again as CSV.
func FuzzReadRecipientsCSV(f *testing.F) {
	for _, s := range []string{
		"phone_number,timezone,customer_name,plan\n+14155550101,America/Los_Angeles,Ada,gold\n(415) 555-0102,,Grace,\n\n415.555.0101,,Ada L.,silver\n",
		"phone_number,customer_name\n+14155550101,Ada\nnot a number,Bob\n+14155550103,Cy,extra\n",
		"\ufeffphone_number,reason\r\n+14155550102,\"moved,\r\naway\"\r\n+14155550101,\r\n",
		"phone_number,\"a\nb\",a\n1,\"x\"\"y\",z\n",
		"phone_number,x\n\"unterminated,1\n",
		"phone_number,x,x\n1,2,3\n",
		"phone_number\n \n\"\"\n   +1 415 555 0101   \n",
		"",
		"\n\n",
		"a\"b,c\n",
		"phone_number,note\n+14155550101,\"two\r\r\nlines\"\n+14155550102,\"lone\rreturn\"\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, file []byte) {
		lines := bytes.Count(file, []byte("\n")) + 1
		rows, err := readRecipientsCSV(bytes.NewReader(file))
		if err != nil {
			checkCSVRefusal(t, err, "recipients", lines)
		} else {
			checkRecipients(t, rows, lines)
		}
		supp, err := readSuppressionsCSV(bytes.NewReader(file))
		if err != nil {
			checkCSVRefusal(t, err, "rows", lines)
			return
		}
		last := 1
		for _, r := range supp {
			if r.Line <= last || r.Line > lines || r.PhoneNumber != strings.TrimSpace(r.PhoneNumber) {
				t.Fatalf("suppression row %+v after line %d of %d", r, last, lines)
			}
			last = r.Line
		}
	})
}

// checkCSVRefusal fails t unless err is validation_failed naming the file or lines it has.
func checkCSVRefusal(t *testing.T, err error, prefix string, lines int) {
	t.Helper()
	var de *data.Error
	if !errors.As(err, &de) || de.Code != data.EINVALID || len(de.Fields) == 0 {
		t.Fatalf("refused with %v, want %s with fields", err, data.EINVALID)
	}
	for path := range de.Fields {
		if path == "file" {
			continue
		}
		rest, ok := strings.CutPrefix(path, prefix+".line_")
		num, _, _ := strings.Cut(rest, ".")
		n, err := strconv.Atoi(num)
		if !ok || err != nil || n < 1 || n > lines {
			t.Fatalf("error field %q does not name one of the file's %d lines", path, lines)
		}
	}
}

// checkRecipients checks accepted rows' lines and cells, then writes them out as CSV and
// reads them back.
func checkRecipients(t *testing.T, rows []data.RecipientInput, lines int) {
	t.Helper()
	names := map[string]bool{}
	last := 1
	for _, r := range rows {
		if r.Line <= last || r.Line > lines {
			t.Fatalf("row %+v after line %d of %d", r, last, lines)
		}
		last = r.Line
		if r.PhoneNumber != strings.TrimSpace(r.PhoneNumber) || r.Timezone != nil && (*r.Timezone == "" || *r.Timezone != strings.TrimSpace(*r.Timezone)) {
			t.Fatalf("row %+v has untrimmed or empty cells", r)
		}
		for k, v := range r.Variables {
			if s, ok := v.(string); !ok || s == "" || s != strings.TrimSpace(s) || k == "" || k == "phone_number" || k == "timezone" {
				t.Fatalf("row %+v has variable %q = %#v", r, k, v)
			}
			names[k] = true
		}
	}
	if len(rows) == 0 {
		return
	}
	header := append([]string{"phone_number", "timezone"}, slices.Sorted(func(yield func(string) bool) {
		for k := range names {
			if !yield(k) {
				return
			}
		}
	})...)
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	w.Write(header)
	for _, r := range rows {
		rec := []string{r.PhoneNumber, ""}
		if r.Timezone != nil {
			rec[1] = *r.Timezone
		}
		for _, k := range header[2:] {
			s, _ := r.Variables[k].(string)
			rec = append(rec, s)
		}
		w.Write(rec)
	}
	w.Flush()
	written := buf.String()
	again, err := readRecipientsCSV(&buf)
	if err != nil {
		t.Fatalf("rows written back as %q do not read: %v", written, err)
	}
	for i := range again {
		again[i].Line = 0
	}
	want := slices.Clone(rows)
	for i := range want {
		want[i].Line = 0
	}
	if !reflect.DeepEqual(again, want) {
		t.Fatalf("rows %#v written back as %q read as %#v", want, written, again)
	}
}
