package knowledge

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// extractCSV turns each data row into one line "header: value; header: value", so a chunk
// carries the column names its values need to be understood by a reader or a language model.
func extractCSV(content []byte) (string, error) {
	if !utf8.Valid(content) {
		return "", fmt.Errorf("cannot read the csv file: it is not UTF-8 text")
	}
	delim, _ := sniffDelimiter(content, 1)
	r := csv.NewReader(bytes.NewReader(content))
	r.Comma = delim
	r.FieldsPerRecord = -1 // ragged rows are common in exports; keep what is there
	r.LazyQuotes = true
	r.ReuseRecord = false
	var header []string
	var b limitedBuilder
	for line := 1; ; line++ {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", fmt.Errorf("cannot read the csv file: %v", err)
		}
		if header == nil {
			header = make([]string, len(rec))
			for i, h := range rec {
				header[i] = strings.TrimSpace(h)
			}
			continue
		}
		var parts []string
		for i, v := range rec {
			v = strings.TrimSpace(v)
			if v == "" {
				continue
			}
			name := ""
			if i < len(header) {
				name = header[i]
			}
			if name == "" {
				name = fmt.Sprintf("column %d", i+1)
			}
			parts = append(parts, name+": "+v)
		}
		if len(parts) > 0 {
			b.WriteString(strings.Join(parts, "; "))
			b.WriteString("\n")
		}
	}
	if b.full {
		return "", fmt.Errorf("cannot read the csv file: %w", errTooMuchText)
	}
	if b.Len() == 0 && len(header) > 0 { // a header alone still says something
		return strings.Join(header, "; "), nil
	}
	return b.String(), nil
}
