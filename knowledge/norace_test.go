//go:build !race

package knowledge

// raceEnabled lets timing tests skip under the race detector, which slows code tenfold.
const raceEnabled = false
