package cli

import "strconv"

// plural counts n of noun in English, "1 change", "2 changes", for every count the CLI
// writes in a sentence: "change(s)" read as if the command did not know its own count.
// Every noun it is given takes a plain "s".
func plural[N int | int64](n N, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.FormatInt(int64(n), 10) + " " + noun + "s"
}
