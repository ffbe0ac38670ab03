//go:build !linux

package bolt

// LockHolder names the process holding the lock on the file at path; off Linux it
// cannot tell ("").
func LockHolder(path string) string { return "" }
