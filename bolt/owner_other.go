//go:build !unix

package bolt

import "io/fs"

// matchOwner does nothing where files have no Unix owner.
func matchOwner(string, fs.FileInfo) error { return nil }

// newDirOwner: a new directory is this process's where files have no Unix owner.
func newDirOwner(string) (fs.FileInfo, error) { return nil, nil }
