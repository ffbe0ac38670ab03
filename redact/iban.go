package redact

// ibanLengths is the IBAN length of each country of the IBAN registry (ISO 13616).
var ibanLengths = map[string]int{
	"AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22,
	"BR": 29, "BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DK": 18, "DO": 28,
	"EE": 20, "EG": 29, "ES": 24, "FI": 18, "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23,
	"GL": 18, "GR": 27, "GT": 28, "HR": 21, "HU": 28, "IE": 22, "IL": 23, "IQ": 23, "IS": 26,
	"IT": 27, "JO": 30, "KW": 30, "KZ": 20, "LB": 28, "LC": 32, "LI": 21, "LT": 20, "LU": 20,
	"LV": 21, "MC": 27, "MD": 24, "ME": 22, "MK": 19, "MR": 27, "MT": 31, "MU": 30, "NL": 18,
	"NO": 15, "PK": 24, "PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22, "SA": 24,
	"SC": 31, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "ST": 25, "SV": 28, "TL": 23, "TN": 24,
	"TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20,
}

func upper(c byte) byte {
	if c >= 'a' && c <= 'z' {
		return c - 32
	}
	return c
}

// ibanSpans finds IBANs: a country code, two check digits and the country's number of
// letters and digits, unbroken or in groups split by single spaces or dashes, whose mod-97
// checksum holds, which does not start inside a word and does not run on into more letters
// or digits.
func ibanSpans(text string) [][2]int {
	var spans [][2]int
	var buf [34]byte
	for i := 0; i+4 <= len(text); i++ {
		// Digits before the country code may be a card that becomes a marker later, so
		// they do not prevent a match (a second pass must find the same).
		if !isLetter(text[i]) || !isLetter(text[i+1]) || !isDigit(text[i+2]) || !isDigit(text[i+3]) ||
			(i > 0 && isLetter(text[i-1])) {
			continue
		}
		want := ibanLengths[string([]byte{upper(text[i]), upper(text[i+1])})]
		if want == 0 {
			continue
		}
		n, k := 0, i
		for n < want && k < len(text) {
			c := text[k]
			if isAlnum(c) {
				buf[n] = upper(c)
				n++
				k++
				continue
			}
			if (c == ' ' || c == '-') && n >= 4 && k+1 < len(text) && isAlnum(text[k+1]) {
				k++
				continue
			}
			break
		}
		if n != want || runsOn(text, k) || !ibanChecksum(buf[:n]) {
			continue
		}
		spans = append(spans, [2]int{i, k})
		i = k - 1
	}
	return spans
}

// ibanChecksum moves the first four characters to the end, reads letters as 10 to 35 and
// checks that the number is 1 modulo 97.
func ibanChecksum(s []byte) bool {
	rem := 0
	for i := 0; i < len(s); i++ {
		c := s[(i+4)%len(s)]
		switch {
		case isDigit(c):
			rem = (rem*10 + int(c-'0')) % 97
		case c >= 'A' && c <= 'Z':
			rem = (rem*100 + int(c-'A') + 10) % 97
		default:
			return false
		}
	}
	return rem == 1
}

// runsOn reports whether the IBAN ending at k continues into more characters: a digit, or
// letters other than a spoken digit ("…7654 32one" may lose "one" to a phone number later;
// a second pass must see the same IBAN).
func runsOn(text string, k int) bool {
	if k >= len(text) || !isAlnum(text[k]) {
		return false
	}
	if isDigit(text[k]) || isLetter(text[k-1]) {
		return true
	}
	return gluedAfter(text, k)
}
