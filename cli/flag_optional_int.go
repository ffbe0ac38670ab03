package cli

import (
	"strconv"
)

// optionalInt is an integer flag that knows whether it was given, for a default that
// depends on another flag (--login-address-rate-limit: ten times --login-rate-limit).
type optionalInt struct {
	n   int
	set bool
}

func (v *optionalInt) String() string {
	if !v.set {
		return "" // pflag then shows no "(default …)": the usage line words it
	}
	return strconv.Itoa(v.n)
}

// Set parses s as ParseInt does, for the same "invalid argument" as an IntVar's.
func (v *optionalInt) Set(s string) error {
	n, err := strconv.ParseInt(s, 0, strconv.IntSize)
	if err != nil {
		return err
	}
	v.n, v.set = int(n), true
	return nil
}

// Type names the value in usage lines, as an IntVar's does.
func (v *optionalInt) Type() string { return "int" }
