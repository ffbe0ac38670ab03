//go:build !unix

package seal

import "context"

// lockKeyDir guards nothing here (no flock): a new key file is then removed only when the
// database refused its key (NewKey.Guarded).
func lockKeyDir(ctx context.Context, dir string) (unlock func(), guarded bool, err error) {
	return func() {}, false, nil
}
